package translate

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkHasOriginTag is the scan a same-dialect body gets when
// providers speak several dialects, over the 10.8 KB Claude Code request,
// beside the plain search for the quoted prefix it replaced (the quote is
// too common a first byte: about 5x slower).
func BenchmarkHasOriginTag(b *testing.B) {
	body, err := os.ReadFile("../../server/testdata/claude_code_10k.json")
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, f func([]byte) bool) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if f(body) {
					b.Fatal("tag found")
				}
			}
		})
	}
	run("slipstream", HasOriginTag)
	run("bytes.Contains_quoted", func(b []byte) bool { return bytes.Contains(b, []byte(`"SsOr`)) })
}
