package server

import (
	"testing"
)

// BenchmarkWSTurn is one Codex-shaped turn (a 40 KB Responses request,
// 20 streamed deltas) over the WebSocket, beside the same turn over
// HTTP+SSE as the baseline. Besides ns/op each reports cpu-ns/op (see
// benchRaw).
func BenchmarkWSTurn(b *testing.B) {
	body := responsesBody(40 << 10)
	stream := responsesStream(20, "resp_1")
	b.Run("websocket", func(b *testing.B) {
		base := wsBenchServer(b, stream)
		w := dialRawWS(b, base)
		frame := asFrame(body, "")
		w.turn(b, frame)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		b.ResetTimer()
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			w.turn(b, frame)
		}
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("http+sse", func(b *testing.B) {
		benchRaw(b, wsBenchServer(b, stream), rawRequest("/v1/responses", body), len(body))
	})
}

// BenchmarkWSTurnEvents is a turn whose cost is its events: a 4 KB
// request answered with 2000 streamed deltas, over the WebSocket and over
// HTTP+SSE. It measures the relay of events to frames.
func BenchmarkWSTurnEvents(b *testing.B) {
	body := responsesBody(4 << 10)
	stream := responsesStream(2000, "resp_1")
	b.Run("websocket", func(b *testing.B) {
		w := dialRawWS(b, wsBenchServer(b, stream))
		frame := asFrame(body, "")
		w.turn(b, frame)
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			w.turn(b, frame)
		}
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("http+sse", func(b *testing.B) {
		benchRaw(b, wsBenchServer(b, stream), rawRequest("/v1/responses", body), len(body))
	})
}

func wsBenchServer(b *testing.B, stream string) string {
	up := rawUpstream(b, httpReply("text/event-stream", stream))
	yml := "providers:\n  - {name: r, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(b, yml, up)
	return base
}
