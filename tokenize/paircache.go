package tokenize

// pairCacheBits sets the pair cache to 8192 entries (64 KiB), which stays in
// the L2 cache while the table's indexes (2.8 MB) do not.
const pairCacheBits = 13

// pairCache remembers, for recently merged pairs of adjacent parts, the rank
// of their concatenation (or that it is no token). Merging a piece asks this
// once per merge on each side, and in real text the same pairs recur (the
// bytes of one character, a character and its usual neighbour), so most
// answers come from here instead of the table's index, which is too large
// to stay in the CPU's caches.
//
// An entry packs the table id (bits 54-55), the two part ranks (bits 36-53
// and 18-35) and the answer (bits 0-17, all ones for no token). The zero
// entry matches no key, since table ids are non-zero. The cache belongs to
// a pooled state, so it needs no locking.
type pairCache [1 << pairCacheBits]uint64

const noRankBits = rankMask // the answer "no token" in an entry

// rank returns the rank of the concatenation of the adjacent parts a and b
// of p, whose bytes are p[from:to], or noRank.
func (c *pairCache) rank(t *table, a, b uint32, p []byte, from, to int32) uint32 {
	key := t.id | uint64(b)<<36 | uint64(a)<<18
	slot := (key * 0x9E3779B97F4A7C15) >> (64 - pairCacheBits)
	if e := c[slot]; e&^rankMask == key {
		if r := uint32(e & rankMask); r != noRankBits {
			return r
		}
		return noRank
	}
	return c.fill(t, key, slot, p[from:to])
}

func (c *pairCache) fill(t *table, key, slot uint64, b []byte) uint32 {
	r, ok := t.lookup(b)
	if !ok {
		c[slot] = key | noRankBits
		return noRank
	}
	c[slot] = key | uint64(r)
	return r
}
