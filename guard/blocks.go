package guard

import "math/bits"

// blockWidth is how many bytes one mask of anchorMasks covers, and
// maskBlocks how many masks one call stores at most.
const (
	blockWidth = 64
	maskBlocks = 64
)

// blockMask is a block holding anchors: bit k of mask is b[at+k].
type blockMask struct {
	at   int
	mask uint64
}

// nibbleTable classifies a byte by its two nibbles: b is an anchor when
// lo[b&15] & hi[b>>4] != 0. Bit h of lo[l] says that the byte h<<4|l is an
// anchor and hi[h] is 1<<h, so any set of ASCII bytes is exact (8 high
// nibbles, 8 bits); bytes from 0x80 have hi 0 and are never anchors. Each
// half is written twice, once per 128-bit lane, for VPSHUFB.
type nibbleTable struct {
	lo [32]byte
	hi [32]byte
}

// newNibbleTable returns the table of the anchors; ok is false when one of
// them is not ASCII, which the table cannot hold.
func newNibbleTable(anchor *[256]bool) (t nibbleTable, ok bool) {
	for c := range 256 {
		if !anchor[c] {
			continue
		}
		if c >= 0x80 {
			return t, false
		}
		h, l := c>>4, c&15
		for lane := 0; lane < 32; lane += 16 {
			t.lo[lane+l] |= 1 << h
			t.hi[lane+h] = 1 << h
		}
	}
	return t, true
}

// blockScan finds the blocks of 64 bytes that hold anchors (anchorMasks:
// two nibble lookups per byte in vector registers) and visits their
// anchors that pass quick in order; the tail of fewer than 64 bytes is
// walked.
func (s *Set) blockScan(b []byte, i int, st *scanState, m *Matches) {
	out := &m.masks
	for len(b)-i >= blockWidth {
		base := i
		n, scanned := anchorMasks(b[base:], &s.nibbles, out)
		for _, bm := range out[:n] {
			for mask := bm.mask; mask != 0; mask &= mask - 1 {
				at := base + bm.at + bits.TrailingZeros64(mask)
				if at >= i && quick(b, at) {
					i = s.visit(b, at, st, m)
				}
			}
		}
		i = max(i, base+scanned)
	}
	s.walk(b, i, st, m)
}
