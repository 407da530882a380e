//go:build !race

package openai

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// respRawEvent is one upstream SSE event, copied out of the reader.
type respRawEvent struct{ name, data []byte }

func respLoadEvents(t *testing.T, path string) []respRawEvent {
	t.Helper()
	stream, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var evs []respRawEvent
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, respRawEvent{bytes.Clone(ev.Name), bytes.Clone(ev.Data)})
	}
}

// TestResponsesDecoderAllocs: 0 allocations per upstream event once warm.
func TestResponsesDecoderAllocs(t *testing.T) {
	raw := respLoadEvents(t, "testdata/responses/upstream_stream.sse")
	var d ResponsesDecoder
	evs := make([]codec.Event, 0, 16)
	run := func() {
		d.Reset()
		for i := range raw {
			var err error
			if evs, err = d.DecodeEvent(evs[:0], raw[i].name, raw[i].data); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(50, run); n != 0 {
		t.Fatalf("ResponsesDecoder: %v allocs per stream of %d events, want 0", n, len(raw))
	}
}

// TestResponsesEncoderAllocs: decoding and encoding a whole stream costs 0
// allocations once the encoder's buffers have grown, for the upstream
// Responses stream and for foreign events (custom input extraction,
// namespaces, signatures).
func TestResponsesEncoderAllocs(t *testing.T) {
	raw := respLoadEvents(t, "testdata/responses/upstream_stream.sse")
	req := respCodexRequest(t)
	var d ResponsesDecoder
	var e ResponsesEncoder
	evs := make([]codec.Event, 0, 16)
	out := make([]byte, 0, 64<<10)
	stream := func() {
		d.Reset()
		e.Reset(req, true)
		out = out[:0]
		for i := range raw {
			evs, _ = d.DecodeEvent(evs[:0], raw[i].name, raw[i].data)
			for j := range evs {
				out = e.Append(out, &evs[j])
			}
		}
	}
	stream()
	if err := CheckResponsesStream(out); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, stream); n != 0 {
		t.Fatalf("Responses stream: %v allocs per stream, want 0", n)
	}

	foreign := respForeignEvents()
	for _, streaming := range []bool{true, false} {
		run := func() {
			e.Reset(req, streaming)
			out = out[:0]
			for j := range foreign {
				out = e.Append(out, &foreign[j])
			}
		}
		run()
		if n := testing.AllocsPerRun(50, run); n != 0 {
			t.Fatalf("ResponsesEncoder (stream %v): %v allocs per response, want 0", streaming, n)
		}
	}
}

// TestFrameExpansionAllocs: reading a WebSocket frame and expanding it
// into its HTTP body, chained or in place, allocate nothing once the
// buffers are grown.
func TestFrameExpansionAllocs(t *testing.T) {
	frame := []byte(`{"type":"response.create","model":"m","previous_response_id":"r1","input":[{"type":"message","role":"user","content":"hi"}],` +
		`"client_metadata":{"ws_request_header_x_a":"1","x-codex-turn-state":"s"}}`)
	prevIn := []byte(`{"type":"message","role":"user","content":"before"}`)
	var vals FrameVals
	var e FrameExpansion
	dst := e.AppendBody(nil, frame, prevIn, nil)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, ok := ParseFrame(frame, &vals); !ok {
			t.Fatal("frame refused")
		}
		dst = e.AppendBody(dst[:0], frame, prevIn, nil)
	}); allocs != 0 {
		t.Errorf("chained: %.1f allocs", allocs)
	}
	buf := make([]byte, 0, len(frame)+FrameSlack)
	if allocs := testing.AllocsPerRun(100, func() {
		buf = append(buf[:0], frame...)
		e.ExpandInPlace(buf[:cap(buf)], buf[:len(frame)], true)
	}); allocs != 0 {
		t.Errorf("in place: %.1f allocs", allocs)
	}
}
