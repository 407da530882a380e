package codec

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func benchBody() []byte {
	line := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` +
		strings.Repeat(`func handler(w http.ResponseWriter) {\n\tw.Write([]byte(\"ok\"))\n}\n`, 40) + `"}]}`
	var b strings.Builder
	b.WriteString(`{"model":"claude-x","messages":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(line)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkValid compares Valid with gjson.Valid, the baseline, on a 1 MB
// agent request.
func BenchmarkValid(b *testing.B) {
	body := benchBody()
	b.Run("codec.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if !Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("gjson.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if !gjson.ValidBytes(body) {
				b.Fatal("invalid")
			}
		}
	})
}

func BenchmarkValidShape(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if !ValidShape(body) {
			b.Fatal("invalid")
		}
	}
}
