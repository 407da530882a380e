//go:build !race

package anthropic

import (
	"testing"

	"slipstream/codec"
)

// TestAllocsPerEvent proves that decoding an upstream stream and encoding
// it for a client costs 0 allocations per event once buffers are warm.
func TestAllocsPerEvent(t *testing.T) {
	f := func(file string, stream bool) {
		t.Helper()
		events := splitSSE(t, readTestdata(t, file))
		var d Decoder
		var e Encoder
		evs := make([]codec.Event, 0, 8)
		dst := make([]byte, 0, 64<<10)
		run := func() {
			d.Reset()
			e.Reset(clientReq, stream)
			dst = dst[:0]
			for _, raw := range events {
				evs, _ = d.DecodeEvent(evs[:0], raw.name, raw.data)
				for i := range evs {
					dst = e.Append(dst, &evs[i])
				}
			}
		}
		run()
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Fatalf("%s stream=%v: %v allocs per stream of %d events, want 0", file, stream, n, len(events))
		}
	}
	f("stream_text.sse", true)
	f("stream_thinking_tool.sse", true)
	f("stream_thinking_tool.sse", false)
	f("stream_error.sse", true)
}

// TestAllocsBody covers the non-streamed path.
func TestAllocsBody(t *testing.T) {
	body := readTestdata(t, "body_tool.json")
	var d Decoder
	var e Encoder
	evs := make([]codec.Event, 0, 32)
	dst := make([]byte, 0, 64<<10)
	run := func() {
		e.Reset(clientReq, false)
		evs, _ = d.DecodeBody(evs[:0], body)
		dst = dst[:0]
		for i := range evs {
			dst = e.Append(dst, &evs[i])
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocs per body, want 0", n)
	}
}
