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

// TestLongPieceCacheExact: pieces of 25 to 128 bytes that differ in one
// byte, or only in length, or in the encoding, each get their own count
// from a warm cache (the cache compares whole bytes, never a hash).
func TestLongPieceCacheExact(t *testing.T) {
	cached := &state{}
	uncached := &state{noPieceCache: true}
	base := []byte("中文的分词测试这是一个很长的句子没有标点符号ABCDEFGHabcdefgh0123456789")
	var pieces [][]byte
	for n := pieceCacheMax + 1; n <= min(len(base), longPieceMax); n++ {
		pieces = append(pieces, base[:n])
		flipped := append([]byte(nil), base[:n]...)
		flipped[n/2] ^= 1
		pieces = append(pieces, flipped)
	}
	for round := range 3 {
		for _, p := range pieces {
			for _, e := range []*Encoding{O200k(), Cl100k()} {
				_, got := cached.encode(e, e.table(), p, nil, false)
				_, want := uncached.encode(e, e.table(), p, nil, false)
				if got != want {
					t.Fatalf("round %d, %s %q: cached count %d, uncached %d", round, e.Name(), p, got, want)
				}
			}
		}
	}
}
