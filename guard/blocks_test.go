package guard

import (
	"math/rand/v2"
	"testing"
)

// TestAnchorMasks compares anchorMasks with a byte loop over random bytes,
// at every offset and many lengths up to past one call's reach.
func TestAnchorMasks(t *testing.T) {
	if !haveBlocks {
		t.Skip("no vector support on this CPU")
	}
	var anchor [256]bool
	for _, c := range []byte("_-AJ@B09(+\x00\x7f") {
		anchor[c] = true
	}
	tab, ok := newNibbleTable(&anchor)
	if !ok {
		t.Fatal("ASCII anchors refused")
	}
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, maskBlocks*blockWidth+300)
	var out [maskBlocks]blockMask
	for round := 0; round < 40; round++ {
		for k := range buf {
			buf[k] = byte(r.IntN(256))
			if round%2 == 0 && anchor[buf[k]] && r.IntN(8) != 0 {
				buf[k] = 'x' // sparser anchors
			}
		}
		for start := 0; start < 70; start++ {
			for end := start; end <= len(buf); end += 61 {
				b := buf[start:end]
				n, scanned := anchorMasks(b, &tab, &out)
				var want []blockMask
				at := 0
				for ; at+blockWidth <= len(b) && len(want) < maskBlocks; at += blockWidth {
					if mask := naiveMask(b[at:], &anchor); mask != 0 {
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
}

func naiveMask(b []byte, anchor *[256]bool) uint64 {
	var mask uint64
	for k := 0; k < blockWidth; k++ {
		if anchor[b[k]] {
			mask |= 1 << k
		}
	}
	return mask
}
