package translate

import "testing"

// TestArrayStream: SSE events leave as array elements, a ping as a
// newline, and Close ends the array; Reset starts a new one.
func TestArrayStream(t *testing.T) {
	var a ArrayStream
	var got []byte
	for _, p := range []string{"data: {\"a\":", "1}\n\n: ping\n\n", "data: {\"b\":2}\n\n"} {
		got = append(got, a.Frame([]byte(p))...)
	}
	got = append(got, a.Close()...)
	if want := "[{\"a\":1}\n,\r\n{\"b\":2}]"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	a.Reset()
	if got := string(a.Close()); got != "[]" {
		t.Fatalf("after Reset: %q", got)
	}
}
