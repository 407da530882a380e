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

// TestKeysStayInText: a piece's key never reads the caller's bytes past
// the text (which another goroutine may be writing): counting a prefix of
// a buffer gives the same result whatever follows it.
func TestKeysStayInText(t *testing.T) {
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		for _, text := range []string{"ab", "zq", "xyzzy", "qwertyuiopasdfghjklzxcvb", "中文"} {
			buf := []byte(text + "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")
			want := e.Count([]byte(text))
			for i := len(text); i < len(buf); i++ {
				buf[i] = byte(i * 7)
			}
			if got := e.Count(buf[:len(text)]); got != want {
				t.Fatalf("%s %q: count %d with other bytes after it, want %d", e.Name(), text, got, want)
			}
		}
	}
}
