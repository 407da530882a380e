package tokenize

import (
	"math/rand"
	"slices"
	"testing"
)

// TestMergeStrategiesAgree: the quadratic scan, the heap and the rank
// buckets give the same tokens on the same piece, whatever its length.
func TestMergeStrategiesAgree(t *testing.T) {
	alphabet := [][]byte{[]byte("a"), []byte("b"), []byte(" "), []byte("ab"), []byte("the"),
		[]byte("中"), []byte("é"), []byte("=")}
	rng := rand.New(rand.NewSource(1))
	st := acquireState()
	defer releaseState(st)
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		tab := e.table()
		for range 600 {
			var p []byte
			for n := 2 + rng.Intn([]int{smallParts, 300}[rng.Intn(2)]); len(p) < n; {
				p = append(p, alphabet[rng.Intn(len(alphabet))]...)
			}
			heap, n2 := st.mergeHeap(tab, p, nil, true)
			small, n1 := heap, n2 // mergeSmall takes at most smallParts parts
			if m := tab.initParts(p, st.small.start[:], st.small.rank[:]); m >= 0 {
				small, n1 = st.mergeSmall(tab, p, m, nil, true)
			}
			if isASCII(p) && len(p) <= smallParts {
				bytes, n0 := st.mergeSmallBytes(tab, p, nil, true)
				if !slices.Equal(bytes, heap) || n0 != n2 {
					t.Fatalf("%s: merges of %q disagree:\nbytes %v\nheap  %v", e.Name(), p, bytes, heap)
				}
			}
			buck, n3 := st.mergeBuckets(tab, p, nil, true)
			if !slices.Equal(small, heap) || !slices.Equal(small, buck) || n1 != len(small) ||
				n2 != n1 || n3 != n1 {
				t.Fatalf("%s: merges of %q disagree:\nsmall %v\nheap  %v\nbuck  %v", e.Name(), p, small, heap, buck)
			}
		}
	}
}
