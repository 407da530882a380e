package ws

import (
	"testing"

	"slipstream/pool"
)

// TestTurnSinkEvents: SSE the server built is split into events and each
// event's data goes out as one text frame; comments and [DONE] do not,
// several data lines are joined with '\n', CRLF lines are read, and
// nothing follows the terminal event.
func TestTurnSinkEvents(t *testing.T) {
	c := &conn{gone: make(chan struct{}), out: pool.Get(256)}
	defer pool.Put(c.out)
	s := &turnSink{c: c}
	in := ": ping\n\n" +
		"event: response.created\ndata: {\"type\":\"response.created\"}\n\n" +
		"data: {\"type\":\"response.output_text.delta\",\r\ndata: \"delta\":\"x\"}\r\n\r\n" +
		"data: [DONE]\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_9\",\"output\":[]}}\n\n" +
		"data: {\"type\":\"response.created\"}\n\n"
	if !s.Events([]byte(in)) {
		t.Fatal("Events reported the client gone")
	}
	var got []string
	for b := c.wbuf; len(b) > 0; {
		if b[0] != 0x81 || b[1] >= 126 {
			t.Fatalf("frame header % x", b[:2])
		}
		n := int(b[1])
		got = append(got, string(b[2:2+n]))
		b = b[2+n:]
	}
	want := []string{
		`{"type":"response.created"}`,
		"{\"type\":\"response.output_text.delta\",\n\"delta\":\"x\"}",
		`{"type":"response.completed","response":{"id":"resp_9","output":[]}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("frames %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d = %q, want %q", i, got[i], want[i])
		}
	}
	if !s.r.done || !s.r.completed || string(s.r.id[:s.r.idLen]) != "resp_9" {
		t.Errorf("relay state %+v, want completed resp_9", s.r)
	}
	close(c.gone)
	if s.Event(nil, []byte(`{}`), nil) {
		t.Error("Event reported success after the client left")
	}
}
