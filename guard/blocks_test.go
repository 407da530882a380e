package guard

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAnchorMasks compares anchorMasks with a byte loop over random bytes,
// at every offset and many lengths up to past one call's reach, for a set
// too large to filter by neighbours (anchors alone) and for the default
// set (anchors whose neighbours may pass quick).
func TestAnchorMasks(t *testing.T) {
	if !haveBlocks {
		t.Skip("no vector support on this CPU")
	}
	for _, set := range []string{"_-AJ@B09(+\x00\x7f", "_-AJ@B"} {
		var anchor [256]bool
		for k := 0; k < len(set); k++ {
			anchor[set[k]] = true
		}
		tab, ok := newNibbleTable(&anchor)
		if !ok {
			t.Fatal("ASCII anchors refused")
		}
		if filtered := tab.filter != 0; filtered != (len(set) == 6) {
			t.Fatalf("%q: filter %v", set, filtered)
		}
		checkMasks(t, &tab, &anchor, randomText(set))
	}
}

// randomText returns bytes drawn from anchors, their neighbours and
// anything else, dense enough that every class is hit.
func randomText(anchors string) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	alpha := anchors + "bekmoprstuyBEKMOPRSTUacix/-c\\n \"{}:,0123456789"
	buf := make([]byte, maskBlocks*blockWidth+300)
	for k := range buf {
		if r.IntN(4) == 0 {
			buf[k] = byte(r.IntN(256))
		} else {
			buf[k] = alpha[r.IntN(len(alpha))]
		}
	}
	return buf
}

func checkMasks(t *testing.T, tab *nibbleTable, anchor *[256]bool, buf []byte) {
	var out [maskBlocks]blockMask
	for start := 0; start < 70; start++ {
		for end := start; end <= len(buf); end += 61 {
			b := buf[start:end]
			n, scanned := anchorMasks(b, tab, &out)
			var want []blockMask
			at := 0
			for ; at+blockWidth <= len(b) && len(want) < maskBlocks; at += blockWidth {
				if mask := naiveMask(b, at, tab, anchor); mask != 0 {
					want = append(want, blockMask{at, mask})
				}
			}
			if n != len(want) || scanned != at {
				t.Fatalf("len %d: %d masks over %d bytes, want %d over %d", len(b), n, scanned, len(want), at)
			}
			for j := range n {
				if out[j] != want[j] {
					t.Fatalf("len %d mask %d: %+v, want %+v", len(b), j, out[j], want[j])
				}
			}
		}
	}
}

// naiveMask is anchorMasks' mask of the block at b[at:], byte by byte.
func naiveMask(b []byte, at int, tab *nibbleTable, anchor *[256]bool) uint64 {
	edge := tab.filter == 0 || at == 0 || at+blockWidth+1 > len(b)
	var mask uint64
	for k := 0; k < blockWidth; k++ {
		i := at + k
		if !anchor[b[i]] {
			continue
		}
		if edge || tab.cur.class(b[i])&tab.prev.class(b[i-1])&tab.next.class(b[i+1]) != 0 {
			mask |= 1 << k
		}
	}
	return mask
}

func (n *nibbles) class(c byte) byte { return n.lo[c&15] & n.hi[c>>4] }

// TestNeighboursCoverQuick: every anchor that quick passes, away from the
// ends, passes one of its neighbours' entries, so the filter never drops
// an anchor that could start a match. Every two bytes before and one
// after each filtered anchor are tried.
func TestNeighboursCoverQuick(t *testing.T) {
	b := []byte("  pqcn")
	for c := range byte(0x80) {
		if len(neighbours[c]) == 0 {
			continue
		}
		b[4] = c
		for p := range 256 {
			for q := range 256 {
				for n := range 256 {
					b[2], b[3], b[5] = byte(p), byte(q), byte(n)
					if quick(b, 4) && !passes(neighbours[c], b[3], b[5]) {
						t.Fatalf("%q passes quick but none of %q's neighbours", b[2:], c)
					}
				}
			}
		}
	}
}

func passes(entries []struct{ prev, next string }, prev, next byte) bool {
	for _, nb := range entries {
		if (nb.prev == "" || strings.IndexByte(nb.prev, prev) >= 0) &&
			(nb.next == "" || strings.IndexByte(nb.next, next) >= 0) {
			return true
		}
	}
	return false
}
