package sse

import (
	"bytes"
	"io"
	"testing"
)

// benchFrame frames stream, read in 16 KiB chunks (about what one read of
// a loopback or TCP connection returns), b.N times.
func benchFrame(b *testing.B, stream []byte) {
	b.Helper()
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	var rd Reader
	rd.MaxEvent = DefaultMaxEvent
	cr := &chunkReader{}
	for i := 0; i < b.N; i++ {
		cr.b, cr.n = stream, 16<<10
		rd.Reset(cr)
		for {
			_, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	rd.Release()
}

// BenchmarkReaderOneBigEvent: one event of almost 16 MiB (the default
// cap) that arrives in many reads. It must cost about what
// BenchmarkReaderSmallEvents costs for the same bytes.
func BenchmarkReaderOneBigEvent(b *testing.B) {
	const size = DefaultMaxEvent - 64
	stream := append([]byte("data: "), bytes.Repeat([]byte("x"), size)...)
	stream = append(stream, "\n\n"...)
	benchFrame(b, stream)
}

// BenchmarkReaderSmallEvents: 16 MiB of 1 KiB events, the baseline for
// BenchmarkReaderOneBigEvent.
func BenchmarkReaderSmallEvents(b *testing.B) {
	ev := append([]byte("data: "), bytes.Repeat([]byte("x"), 1024-8)...)
	ev = append(ev, "\n\n"...)
	benchFrame(b, bytes.Repeat(ev, 16<<10))
}
