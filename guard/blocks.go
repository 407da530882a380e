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

// nibbles classifies a byte x by its two nibbles: x is in class k when bit
// k of lo[x&15] & hi[x>>4] is set. A class is thus a product of a set of low
// and a set of high nibbles: exact for one byte, or for bytes sharing their
// high nibble, and a superset otherwise. Each half is written twice, once
// per 128-bit lane, for VPSHUFB.
type nibbles struct {
	lo [32]byte
	hi [32]byte
}

// add puts the bytes of set in class bit (its product hull); an empty set
// puts every byte there.
func (n *nibbles) add(bit byte, set string) {
	for lane := 0; lane < 32; lane += 16 {
		if set == "" {
			for k := range 16 {
				n.lo[lane+k] |= bit
				n.hi[lane+k] |= bit
			}
			continue
		}
		for k := 0; k < len(set); k++ {
			n.lo[lane+int(set[k]&15)] |= bit
			n.hi[lane+int(set[k]>>4)] |= bit
		}
	}
}

// nibbleTable is what anchorMasks keeps: b[i] when, for some class k, b[i]
// is in class k of cur, b[i-1] in class k of prev and b[i+1] in class k of
// next. Each class is an anchor byte with one way its neighbours may let
// quick pass (neighbours); the anchors without a rule there share a class
// per high nibble with any neighbours. The first and last block of an
// input, whose neighbours may be outside it, are kept by cur alone, and so
// is every block when filter is 0.
type nibbleTable struct {
	cur, prev, next nibbles
	filter          uint64 // not 0: look at the neighbours
}

// newNibbleTable returns the table of the anchors; ok is false when one of
// them is not ASCII, which cannot be classified by nibbles.
func newNibbleTable(anchor *[256]bool) (t nibbleTable, ok bool) {
	classes := 0
	var free uint8 // high nibbles of the anchors without neighbour rules
	for c := range 256 {
		if !anchor[c] {
			continue
		}
		if c >= 0x80 {
			return t, false
		}
		if n := len(neighbours[c]); n > 0 {
			classes += n
		} else {
			free |= 1 << (c >> 4)
		}
	}
	if classes+bits.OnesCount8(free) > 8 {
		return loneTable(anchor), true
	}
	bit := byte(1)
	for c := range 128 {
		for _, nb := range neighbours[c] {
			if anchor[c] {
				t.cur.add(bit, string(rune(c)))
				t.prev.add(bit, nb.prev)
				t.next.add(bit, nb.next)
				bit <<= 1
			}
		}
	}
	for h := range 8 {
		if free&(1<<h) == 0 {
			continue
		}
		for c := h << 4; c < h<<4+16; c++ {
			if anchor[c] && len(neighbours[c]) == 0 {
				t.cur.add(bit, string(rune(c)))
			}
		}
		t.prev.add(bit, "")
		t.next.add(bit, "")
		bit <<= 1
	}
	t.filter = 1
	return t, true
}

// loneTable classifies the anchors alone, one class per high nibble (at
// most 8 for ASCII: exact), for sets with too many neighbour rules.
func loneTable(anchor *[256]bool) (t nibbleTable) {
	for c := range 128 {
		if anchor[c] {
			t.cur.add(1<<(c>>4), string(rune(c)))
		}
	}
	return t
}

// blockScan finds the blocks of 64 bytes that hold anchors (anchorMasks:
// nibble lookups in vector registers) and visits their anchors that pass
// quick in order; the tail of fewer than 64 bytes is walked.
func (s *Set) blockScan(b []byte, i int, st *scanState, m *Matches) {
	if len(b)-i >= blockWidth && m.masks == nil {
		m.masks = new([maskBlocks]blockMask) // kept: Matches are pooled
	}
	out := m.masks
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
