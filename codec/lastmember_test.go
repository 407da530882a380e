package codec

import "testing"

func TestLastObjectMember(t *testing.T) {
	f := func(b, want string) {
		t.Helper()
		got := LastObjectMember([]byte(b), []byte(`"usage"`))
		if want == "<nil>" {
			if got != nil {
				t.Errorf("%s: got %q, want nil", b, got)
			}
			return
		}
		if string(got) != want {
			t.Errorf("%s: got %q, want %q", b, got, want)
		}
	}
	f(`{"usage":{"a":1}}`, `{"a":1}`)
	f(`{"usage" : {"a":{"b":2}} ,"x":1}`, `{"a":{"b":2}}`)
	f(`{"usage":{"a":1},"t":"x","usage":{"a":2}}`, `{"a":2}`)
	f(`{"t":"say \"usage\": {\"a\":1}"}`, "<nil>")
	f(`{"usage":{"a":1},"t":"\"usage\":3"}`, `{"a":1}`)
	f(`{"usage":null}`, "<nil>")
	f(`"usage":{"a":1`, "<nil>")
	f(``, "<nil>")
}

// FuzzLastObjectMember: no panic, and what it finds is one object.
func FuzzLastObjectMember(f *testing.F) {
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":1}}`))
	f.Add([]byte(`"usage":{"a":"\"usage\":{}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := LastObjectMember(b, []byte(`"usage"`))
		if got != nil && (got[0] != '{' || got[len(got)-1] != '}') {
			t.Fatalf("%q: not an object: %q", b, got)
		}
	})
}
