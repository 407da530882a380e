package tokenize

import "testing"

// TestPieceCacheExact: counts from a warm piece cache, shared by both
// encodings through one state, equal counts that merge every piece.
func TestPieceCacheExact(t *testing.T) {
	cached := &state{}
	uncached := &state{noPieceCache: true}
	for round := range 2 {
		for name, text := range corpusFiles(t) {
			for _, e := range []*Encoding{O200k(), Cl100k()} {
				_, got := cached.encode(e, e.table(), text, nil, false)
				_, want := uncached.encode(e, e.table(), text, nil, false)
				if got != want {
					t.Fatalf("round %d, %s %s: cached count %d, uncached %d", round, e.Name(), name, got, want)
				}
			}
		}
	}
}
