package sse

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestVerbatimSentinel: the sentinel passes as data only when given.
func TestVerbatimSentinel(t *testing.T) {
	f := func(raw string, sentinel []byte, want bool) {
		t.Helper()
		var rd Reader
		rd.Reset(strings.NewReader(raw))
		defer rd.Release()
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if got := Verbatim(&ev, sentinel); got != want {
			t.Errorf("%q %q: got %v, want %v", raw, sentinel, got, want)
		}
	}
	f("data: [DONE]\n\n", []byte("[DONE]"), true)
	f("data: [DONE]\n\n", nil, false)
	f("data: [DONE] \n\n", []byte("[DONE]"), false)
	f("data: {}\n\n", []byte("[DONE]"), true)
	f("data: {}\n\n", nil, true)
}

// FuzzVerbatim: any bytes framed into events check without a panic, and
// an event that passes has a valid UTF-8 name and raw bytes of only
// event, data, id, retry and comment lines.
func FuzzVerbatim(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\n: ping\n\ndata: [DONE]\n\n"))
	f.Add([]byte("id: 7\r\nevent: ping\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n"))
	f.Add([]byte("data: {}\n\x8f\x12garbage\n\n\x00\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		var rd Reader
		rd.MaxEvent = 1 << 16
		rd.Reset(bytes.NewReader(stream))
		defer rd.Release()
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			if !Verbatim(&ev, []byte("[DONE]")) {
				continue
			}
			if !utf8.Valid(ev.Raw) || ev.Name != nil && !validName(ev.Name) {
				t.Fatalf("passed: %q", ev.Raw)
			}
			if ev.Data != nil && !validLines(ev.Raw) && !canonical(&ev) {
				t.Fatalf("passed with stray lines: %q", ev.Raw)
			}
		}
	})
}
