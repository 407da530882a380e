package gemini

import (
	"bytes"
	"testing"
)

// BenchmarkArrayStream reframes a Gemini SSE stream into the JSON-array
// form, event by event as the relay writes it; the baseline beside it is
// the same bytes copied as they are (what an SSE client gets).
func BenchmarkArrayStream(b *testing.B) {
	stream := readTestdata(b, "encoded_stream_text.sse")
	events := bytes.SplitAfter(stream, []byte("\n\n"))
	out := make([]byte, 0, 4096)
	b.Run("array", func(b *testing.B) {
		var a ArrayStream
		b.ReportAllocs()
		b.SetBytes(int64(len(stream)))
		for i := 0; i < b.N; i++ {
			a.Reset()
			for _, ev := range events {
				out = a.AppendSSE(out[:0], ev)
			}
			out = a.AppendClose(out[:0])
		}
	})
	b.Run("sse_copy", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(stream)))
		for i := 0; i < b.N; i++ {
			for _, ev := range events {
				out = append(out[:0], ev...)
			}
		}
	})
}
