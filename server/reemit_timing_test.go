package server

import (
	"fmt"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// BenchmarkValidRelayed is the per-event cost of checking an upstream
// event before the same-dialect relay writes it: a text delta as the four
// dialects send most, and a 16 KB tool-argument event.
func BenchmarkValidRelayed(b *testing.B) {
	big := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"" +
		strings.Repeat(`{\"path\":\"/src/f.go\",\"text\":\"x\"}`, 16<<10/40) + "\"}}\n\n"
	for _, c := range []struct {
		name string
		d    codec.Dialect
		raw  string
	}{
		{"anthropic_delta", codec.DialectAnthropic, fmt.Sprintf(anthEvent, 12345)},
		{"chat_delta", codec.DialectChat, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello there\"},\"finish_reason\":null}]}\n\n"},
		{"anthropic_16KB", codec.DialectAnthropic, big},
	} {
		var rd sse.Reader
		rd.Reset(strings.NewReader(c.raw))
		ev, err := rd.Next()
		if err != nil || !validRelayed(c.d, &ev) {
			b.Fatalf("%s: %v", c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(ev.Raw)))
			for i := 0; i < b.N; i++ {
				if !validRelayed(c.d, &ev) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
