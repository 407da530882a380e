package sse

import (
	"bytes"
	"testing"
)

func TestFirstEvent(t *testing.T) {
	f := func(b, want string, wantOK bool) {
		t.Helper()
		ev, ok := FirstEvent([]byte(b))
		if string(ev) != want || ok != wantOK {
			t.Errorf("%q: got %q %v, want %q %v", b, ev, ok, want, wantOK)
		}
	}
	f("event: a\ndata: {}\n\nevent: b\n\n", "event: a\ndata: {}", true)
	f(": ping\n\n\r\n: x\r\n\r\ndata: 1\r\n\r\n", "data: 1", true)
	f("data: 1\n", "", false)
	f(": ping\n\n", "", false)
	f("", "", false)
}

func TestNextEvent(t *testing.T) {
	f := func(b, wantEv, wantRest string, wantOK bool) {
		t.Helper()
		ev, rest, ok := NextEvent([]byte(b))
		if string(ev) != wantEv || string(rest) != wantRest || ok != wantOK {
			t.Errorf("%q: got %q %q %v", b, ev, rest, ok)
		}
	}
	f("data: 1\n\ndata: 2\n\n", "data: 1", "data: 2\n\n", true)
	f("data: 1\r\n\r\ndata: 2\n\n", "data: 1", "data: 2\n\n", true)
	f("data: 1\n", "", "data: 1\n", false)
}

func TestAppendRawData(t *testing.T) {
	f := func(ev, want string) {
		t.Helper()
		if got := AppendRawData([]byte("x"), []byte(ev)); string(got) != "x"+want {
			t.Errorf("%q: got %q, want %q", ev, got, "x"+want)
		}
	}
	f("event: a\ndata: {\"a\":1}", `{"a":1}`)
	f("data:  {\"a\": \r\ndata:1}\r", `{"a":1}`)
	f(": c\nid: 3", ``)
}

// FuzzFirstEvent: no panic; an event found is a view into the input that
// is not a comment and holds no blank line; NextEvent splits the input
// without losing bytes.
func FuzzFirstEvent(f *testing.F) {
	f.Add([]byte(": ping\n\nevent: error\ndata: {\"type\":\"error\"}\n\n"))
	f.Add([]byte("\r\n\r\ndata: 1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ev, ok := FirstEvent(b); ok {
			if len(ev) > 0 && ev[0] == ':' || bytes.Contains(ev, []byte("\n\n")) || bytes.Contains(ev, []byte("\r\n\r\n")) {
				t.Fatalf("%q: event %q", b, ev)
			}
			if len(ev) > 0 && !bytes.Contains(b, ev) {
				t.Fatalf("%q: %q not from the input", b, ev)
			}
		}
		if ev, rest, ok := NextEvent(b); ok && len(ev)+len(rest) > len(b) {
			t.Fatalf("%q: split into %q and %q", b, ev, rest)
		}
		AppendRawData(nil, b)
	})
}
