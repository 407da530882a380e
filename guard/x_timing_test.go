package guard

import (
	"bytes"
	"fmt"
	"testing"
)

var benchSizes = []int{10 << 10, 1 << 20}

// BenchmarkScanBody: the request-side scan of a body with no match, with the
// default rules and with every detector (PII included); the baselines are a
// memchr pass (bytes.IndexByte, the floor of any scan) and a byte loop.
func BenchmarkScanBody(b *testing.B) {
	for _, size := range benchSizes {
		body := agentBody(1, size)
		for _, tc := range []struct {
			name string
			cfg  Config
		}{{"default", Config{}}, {"all", allRules()}} {
			s := mustCompile(b, tc.cfg)
			m := AcquireMatches()
			b.Run(fmt.Sprintf("%s/%dKB", tc.name, len(body)>>10), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					s.ScanBody(body, m)
				}
				if m.Len() != 0 && tc.name == "default" {
					b.Fatalf("%d matches in a clean body", m.Len())
				}
			})
			ReleaseMatches(m)
		}
		b.Run(fmt.Sprintf("baseline-indexbyte/%dKB", len(body)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if bytes.IndexByte(body, 0) >= 0 {
					b.Fatal("zero byte")
				}
			}
		})
		b.Run(fmt.Sprintf("baseline-byteloop/%dKB", len(body)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			n := 0
			for b.Loop() {
				for _, c := range body {
					if c == 0 {
						n++
					}
				}
			}
			if n != 0 {
				b.Fatal("zero byte")
			}
		})
	}
}

// BenchmarkScannerFeed: one streamed text delta without a match.
func BenchmarkScannerFeed(b *testing.B) {
	s := mustCompile(b, Config{})
	sc := s.AcquireScanner()
	defer ReleaseScanner(sc)
	delta := []byte("Let me run the linter and the unit tests for the package we changed. ")
	var out []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(delta)))
	for b.Loop() {
		out = sc.Feed(out[:0], delta)
	}
}

// BenchmarkRestorerFeed: one streamed delta without a placeholder.
func BenchmarkRestorerFeed(b *testing.B) {
	r := AcquireRestorer(NewVault(VaultConfig{}), "k", 1)
	defer ReleaseRestorer(r)
	delta := []byte("Let me run the linter and the unit tests [for] the package we changed. ")
	var out []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(delta)))
	for b.Loop() {
		out = r.Feed(out[:0], delta)
	}
}
