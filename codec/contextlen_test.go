package codec

import "testing"

func TestContextNumbers(t *testing.T) {
	f := func(msg string, prompt, limit int64, ok bool) {
		t.Helper()
		p, l, o := ContextNumbers([]byte(msg))
		if p != prompt || l != limit || o != ok {
			t.Fatalf("%q: %d %d %v", msg, p, l, o)
		}
		if ok && !IsContextLengthMessage([]byte(msg)) {
			t.Fatalf("%q not recognised", msg)
		}
	}
	f("This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens.", 250000, 128000, true)
	f("prompt is too long: 250000 tokens > 200000 maximum", 250000, 200000, true)
	f("The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", 1200000, 1048576, true)
	f("something else", 0, 0, false)
}
