//go:build !race

package gemini

import (
	"bytes"
	"testing"

	"slipstream/codec"
)

// streamEvents returns the data payloads of a testdata stream.
func streamEvents(t *testing.T, name string) [][]byte {
	var out [][]byte
	for _, ev := range bytes.Split(bytes.ReplaceAll(readTestdata(t, name), []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
		if d, ok := bytes.CutPrefix(ev, []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestDecoderAllocations(t *testing.T) {
	for _, name := range []string{"stream_text.sse", "stream_tool.sse", "stream_thinking.sse", "stream_error.sse"} {
		events := streamEvents(t, name)
		var d Decoder
		evs := make([]codec.Event, 0, 64)
		run := func() {
			d.Reset()
			for _, data := range events {
				evs, _ = d.DecodeEvent(evs[:0], nil, data)
			}
			evs = d.End(evs[:0])
		}
		run()
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Fatalf("%s: %v allocations per stream, want 0", name, n)
		}
	}
}

func TestEncoderAllocations(t *testing.T) {
	for _, stream := range []bool{true, false} {
		var e Encoder
		out := make([]byte, 0, 4096)
		run := func() {
			e.Reset(&clientReq, stream)
			out = out[:0]
			for i := range anthropicEvents {
				out = e.Append(out, &anthropicEvents[i])
			}
		}
		run()
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Fatalf("stream=%v: %v allocations per response, want 0", stream, n)
		}
	}
}

// TestArrayStreamAllocations: reframing events into the JSON-array form
// allocates nothing once its buffers are warm, whole or split events.
func TestArrayStreamAllocations(t *testing.T) {
	stream := readTestdata(t, "encoded_stream_text.sse")
	var a ArrayStream
	out := make([]byte, 0, 4096)
	for _, n := range []int{len(stream), 5} {
		run := func() {
			a.Reset()
			out = out[:0]
			for s := stream; len(s) > 0; s = s[min(n, len(s)):] {
				out = a.AppendSSE(out[:0], s[:min(n, len(s))])
			}
			out = a.AppendClose(out[:0])
		}
		run()
		if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
			t.Fatalf("%d-byte writes: %v allocations per stream", n, allocs)
		}
	}
}
