package sse

import (
	"bytes"
	"io"
	"strings"
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

// BenchmarkVerbatim is the per-event cost of checking an upstream event
// before a same-dialect relay writes it: a text delta as the dialects send
// most, and a 16 KB tool-argument event.
func BenchmarkVerbatim(b *testing.B) {
	big := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" +
		strings.Repeat(`{\"path\":\"/src/f.go\",\"text\":\"x\"}`, 16<<10/40) + "\"}}\n\n"
	for _, c := range []struct {
		name     string
		sentinel []byte
		raw      string
	}{
		{"anthropic_delta", nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"12345\"}}\n\n"},
		{"chat_delta", []byte("[DONE]"), "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello there\"},\"finish_reason\":null}]}\n\n"},
		{"anthropic_16KB", nil, big},
	} {
		var rd Reader
		rd.Reset(strings.NewReader(c.raw))
		ev, err := rd.Next()
		if err != nil || !Verbatim(&ev, c.sentinel) {
			b.Fatalf("%s: %v", c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(ev.Raw)))
			for i := 0; i < b.N; i++ {
				if !Verbatim(&ev, c.sentinel) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
