package tokenize

import "encoding/binary"

const (
	// pieceCacheBits sets the piece cache to 4096 entries (128 KiB).
	pieceCacheBits = 12
	// pieceCacheWays is its associativity (see lookup).
	pieceCacheWays = 4
	// pieceCacheMax is the longest piece the cache holds: its bytes are
	// the key, compared whole, in three words.
	pieceCacheMax = 24
)

// pieceCache remembers how many tokens recently merged pieces became, so
// that a piece seen again (a rare word, an identifier, a fragment of
// another script; in a proxy's traffic the same conversation is counted
// again every turn) is not merged again. Only pieces that are not tokens
// and have at most pieceCacheMax bytes are kept; the key is the piece's
// bytes, so a hit is exact. Count uses it; AppendTokens, which needs the
// ids, does not. It belongs to a pooled state, so it needs no locking.
type pieceCache [1 << pieceCacheBits]pieceEntry

// pieceEntry holds a piece's bytes, zero-padded, and in meta the table id
// (bits 54-55, non-zero), the piece length (bits 32-39) and the count.
type pieceEntry struct {
	w    [3]uint64
	meta uint64
}

// pieceKey loads a piece of 2 to pieceCacheMax bytes into three words.
func pieceKey(p []byte) (w [3]uint64) {
	if cap(p) >= pieceCacheMax {
		// Three loads within p's capacity, masked to its length.
		q := p[:pieceCacheMax]
		for i := range w {
			m := uint(min(max(len(p)-8*i, 0), 8))
			w[i] = binary.LittleEndian.Uint64(q[8*i:]) & (^uint64(0) >> (64 - 8*m))
		}
		return w
	}
	var buf [pieceCacheMax]byte
	copy(buf[:], p)
	w[0] = binary.LittleEndian.Uint64(buf[0:])
	w[1] = binary.LittleEndian.Uint64(buf[8:])
	w[2] = binary.LittleEndian.Uint64(buf[16:])
	return w
}

// lookup returns the entry for piece p (of at most pieceCacheMax bytes) of
// table t, its expected meta without the count, and whether it holds p.
//
// The cache is four-way set-associative. A miss fills the set's first
// empty entry, else its last; a hit moves its entry one place forward.
// So a piece seen again displaces one seen once, and a set that more
// pieces cycle through than it holds still hits on its first three.
// Direct-mapped and half the size, a third of the 1,200 distinct short
// pieces of BenchmarkCount's all1MB evicted each other on every pass;
// two-way, 6%.
func (c *pieceCache) lookup(t *table, p []byte) (*pieceEntry, [3]uint64, uint64, bool) {
	w := pieceKey(p)
	meta := t.id | uint64(len(p))<<32
	h := mix(w[0]^w[2]^0x9E3779B97F4A7C15, w[1]^meta^0xC2B2AE3D27D4EB4F)
	set := c[h>>(64-pieceCacheBits)&^(pieceCacheWays-1):][:pieceCacheWays]
	for i := range set {
		if e := &set[i]; e.w == w && e.meta&^0xFFFFFFFF == meta {
			if i == 0 {
				return e, w, meta, true
			}
			set[i-1], set[i] = set[i], set[i-1]
			return &set[i-1], w, meta, true
		}
	}
	for i := range pieceCacheWays - 1 {
		if set[i].meta == 0 {
			return &set[i], w, meta, false
		}
	}
	return &set[pieceCacheWays-1], w, meta, false
}

const (
	// longPieceBits sets the long-piece cache to 512 entries (68 KiB).
	longPieceBits = 9
	// longPieceMax is the longest piece the long-piece cache holds; a run
	// of Chinese or Japanese between punctuation marks is 30-120 bytes.
	longPieceMax = 128
)

// longPieceCache is pieceCache for the pieces of pieceCacheMax+1 to
// longPieceMax bytes (runs of Chinese, Japanese or base64, long
// identifiers): their merges cost the most per byte, so a hit saves the
// most. An entry holds the piece's bytes, which a hit compares whole, so a
// hit is exact.
type longPieceCache [1 << longPieceBits]longPieceEntry

// longPieceEntry holds a piece's bytes and in meta the table id (bits
// 54-55, non-zero), the piece length (bits 32-39) and the count.
type longPieceEntry struct {
	b    [longPieceMax]byte
	meta uint64
}

// lookup returns the entry for piece p of table t, its expected meta
// without the count, and whether it holds p.
func (c *longPieceCache) lookup(t *table, p []byte) (*longPieceEntry, uint64, bool) {
	meta := t.id | uint64(len(p))<<32
	set := c[mix(hashBytes(p), meta^0xC2B2AE3D27D4EB4F)>>(64-longPieceBits)&^1:][:2]
	if e := &set[0]; e.meta&^0xFFFFFFFF == meta && string(e.b[:len(p)]) == string(p) {
		return e, meta, true
	}
	if e := &set[1]; e.meta&^0xFFFFFFFF == meta && string(e.b[:len(p)]) == string(p) {
		set[0], set[1] = set[1], set[0]
		return &set[0], meta, true
	}
	return &set[min(set[0].meta, 1)], meta, false
}
