package server

import (
	"io"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"slipstream/codec"
	"slipstream/internal/testkit"
)

// The model splice of an aliased same-dialect request beside sjson doing
// the same, on 1 KB, 10 KB and 1 MB bodies. The figures and the choice
// they led to are in docs/ARCHITECTURE.md.

// aliasedBody is an Anthropic request of about n bytes, the model first.
func aliasedBody(n int) []byte {
	return testkit.Filled(n, `{"model":"sonnet","max_tokens":32000,"stream":true,"messages":[`,
		`{"role":"user","content":[{"type":"text","text":"`+strings.Repeat(`Refactor the parser so that it reads one pass. `, 4)+`"}]}`, `]}`)
}

func BenchmarkModelSplice(b *testing.B) {
	model := []byte("claude-sonnet-4-5-20250929")
	quoted := []byte(`"claude-sonnet-4-5-20250929"`)
	for _, sz := range testkit.BodySizes {
		body := aliasedBody(sz.N)
		val := codec.Member(body, "model")
		b.Run(sz.Name+"/modelSplice", func(b *testing.B) {
			var m modelSplice
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				m.reset(body, codec.Member(body, "model"), model)
				if _, err := m.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sz.Name+"/sjson_SetBytes", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				out, err := sjson.SetRawBytes(body, "model", quoted)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Discard.Write(out)
			}
		})
		b.Run(sz.Name+"/sjson_ReplaceInPlace", func(b *testing.B) {
			// an alias is longer than the name the client sent, so the
			// in-place option falls back to a new slice; shown with a name of
			// the same length, its best case.
			work := append([]byte(nil), body...)
			same := [2][]byte{[]byte(`"sonnat"`), val}
			opts := &sjson.Options{Optimistic: true, ReplaceInPlace: true}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			i := 0
			for b.Loop() {
				out, err := sjson.SetRawBytesOptions(work, "model", same[i&1], opts)
				if err != nil || &out[0] != &work[0] {
					b.Fatal("not replaced in place", err)
				}
				_, _ = io.Discard.Write(out)
				work, i = out, i+1
			}
		})
	}
}
