package tokenize

import "encoding/binary"

const (
	// pieceCacheBits sets the piece cache to 2048 entries (64 KiB).
	pieceCacheBits = 11
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
func (c *pieceCache) lookup(t *table, p []byte) (*pieceEntry, [3]uint64, uint64, bool) {
	w := pieceKey(p)
	meta := t.id | uint64(len(p))<<32
	h := mix(w[0]^w[2]^0x9E3779B97F4A7C15, w[1]^meta^0xC2B2AE3D27D4EB4F)
	e := &c[h>>(64-pieceCacheBits)]
	return e, w, meta, e.w == w && e.meta&^0xFFFFFFFF == meta
}
