package translate

import (
	"bytes"
	"testing"

	"slipstream/codec"
	"slipstream/codec/anthropic"
	"slipstream/codec/gemini"
	"slipstream/codec/openai"
)

// TestTailsFor: each dialect gets its own tail, reset, and a dialect
// without a row gets Chat's; a Responses tail writes the model it was
// given into the response.created of its error.
func TestTailsFor(t *testing.T) {
	var ts Tails
	f := func(d codec.Dialect, want Tail) {
		t.Helper()
		got := ts.For(d, []byte("m"), 7)
		if got != want {
			t.Errorf("%v: got %T %p, want %T %p", d, got, got, want, want)
		}
		if got.Done() || got.Usage().Known {
			t.Errorf("%v: tail not reset", d)
		}
	}
	_ = [...]any{(*anthropic.Tail)(&ts.anthropic), (*openai.ChatTail)(&ts.chat), (*gemini.Tail)(&ts.gemini)}
	f(codec.DialectAnthropic, &ts.anthropic)
	f(codec.DialectChat, &ts.chat)
	f(codec.DialectResponses, &ts.responses)
	f(codec.DialectGemini, &ts.gemini)
	f(codec.DialectUnknown, &ts.chat)

	ts.anthropic.Observe([]byte("message_stop"), []byte(`{}`))
	if tl := ts.For(codec.DialectAnthropic, nil, 0); tl.Done() {
		t.Error("For did not reset a used tail")
	}
	e := codec.Error{Message: []byte("x")}
	out := ts.For(codec.DialectResponses, []byte("gpt-x"), 42).AppendError(nil, &e)
	if !bytes.Contains(out, []byte(`"created_at":42,"model":"gpt-x"`)) {
		t.Errorf("Responses tail error without the model and time it was given:\n%s", out)
	}
}
