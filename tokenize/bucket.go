package tokenize

import (
	"slices"
	"sync"
)

// bucketPiece is the shortest piece merged by mergeBuckets; shorter pieces
// use the heap, whose per-call setup is smaller.
const bucketPiece = 1024

// headsPool holds rank-indexed bucket heads (1 MiB each). mergeBuckets
// leaves them all zero, so they are reused without clearing.
var headsPool sync.Pool

// buckets is a priority queue of merge candidates grouped by rank: a small
// heap of the distinct ranks pending, and per rank a list of positions.
// Merging never creates a pair of the rank being merged (the new pairs'
// bytes are longer than that token), so a rank's positions can be taken as
// one batch and merged left to right without a heap operation each.
type buckets struct {
	head      []int32  // per rank: 1 + index of its newest entry; 0 = empty
	pos       []int32  // entry: a pair position
	link      []int32  // entry: 1 + index of the next older entry; 0 = end
	ranks     []uint32 // min-heap of the ranks whose bucket is non-empty
	batch     []int32
	free      int32  // 1 + index of the first reusable entry; 0 = none
	minPushed uint32 // lowest rank pushed since last reset
}

// push adds position p to bucket r, reusing an entry that take released
// when there is one, so the entries in use stay near the pairs pending
// (about n) instead of every pair ever pushed (about 3n).
func (b *buckets) push(r uint32, p int32) {
	if b.head[r] == 0 {
		b.ranks = heapPush32(b.ranks, r)
	}
	if e := b.free; e != 0 {
		b.free = b.link[e-1]
		b.pos[e-1], b.link[e-1] = p, b.head[r]
		b.head[r] = e
	} else {
		b.pos = append(b.pos, p)
		b.link = append(b.link, b.head[r])
		b.head[r] = int32(len(b.pos))
	}
	b.minPushed = min(b.minPushed, r)
}

// take empties bucket r and returns its positions in ascending order. The
// slice is valid until the next take.
func (b *buckets) take(r uint32) []int32 {
	batch := b.batch[:0]
	for e := b.head[r]; e != 0; {
		batch = append(batch, b.pos[e-1])
		older := b.link[e-1]
		b.link[e-1] = b.free
		b.free = e
		e = older
	}
	b.head[r] = 0
	slices.Reverse(batch) // entries are listed newest first
	if !slices.IsSorted(batch) {
		slices.Sort(batch)
	}
	b.batch = batch
	return batch
}

// mergeBuckets is merge for very long pieces, such as 100 KB of one
// character: near-linear, where a heap spends most of its time sifting.
func (st *state) mergeBuckets(t *table, p []byte, dst []uint32, ids bool) ([]uint32, int) {
	n := int32(len(p))
	st.growHeapScratch(int(n))
	next, prev, pairRank, partRank := st.next, st.prev, st.pairRank, st.partRank
	b := &st.buckets
	c := &st.cache
	heads := acquireHeads()
	b.head = *heads
	if cap(b.pos) < len(p) {
		b.pos, b.link = make([]int32, 0, len(p)), make([]int32, 0, len(p))
	}
	b.free = 0
	parts := st.linkParts(t, p)
	for i := int32(0); i < n; i++ {
		if r := pairRank[i]; r <= rankMask {
			b.push(r, i)
		}
	}
	for len(b.ranks) > 0 {
		var r uint32
		r, b.ranks = heapPop32(b.ranks)
		batch := b.take(r)
		for bi, i := range batch {
			if pairRank[i] != r {
				continue
			}
			b.minPushed = noRank
			j := next[i]
			k := next[j]
			next[i], partRank[i], pairRank[j], pairRank[i] = k, r, noRank, noRank
			parts--
			if k < n {
				prev[k] = i
				if r2 := c.rank(t, r, partRank[k], p, i, next[k]); r2 != noRank {
					pairRank[i] = r2
					b.push(r2, i)
				}
			}
			if pi := prev[i]; pi >= 0 {
				pairRank[pi] = c.rank(t, partRank[pi], r, p, pi, k)
				if pairRank[pi] != noRank {
					b.push(pairRank[pi], pi)
				}
			}
			if b.minPushed < r {
				// A lower rank appeared; it must merge before the rest.
				for _, q := range batch[bi+1:] {
					b.push(r, q)
				}
				break
			}
		}
	}
	headsPool.Put(heads)
	b.head, b.pos, b.link = nil, b.pos[:0], b.link[:0]
	if ids {
		for i := int32(0); i < n; i = next[i] {
			dst = append(dst, partRank[i])
		}
	}
	return dst, parts
}

// acquireHeads returns a zeroed heads table; give it back to headsPool
// by the same pointer, so that pooling it allocates nothing.
func acquireHeads() *[]int32 {
	if v := headsPool.Get(); v != nil {
		return v.(*[]int32)
	}
	h := make([]int32, 1<<rankBits)
	return &h
}

func heapPush32(h []uint32, e uint32) []uint32 {
	h = append(h, e)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent] <= e {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = e
	return h
}

func heapPop32(h []uint32) (uint32, []uint32) {
	top := h[0]
	last := len(h) - 1
	e := h[last]
	h = h[:last]
	i := 0
	for {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && h[c+1] < h[c] {
			c++
		}
		if e <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	if last > 0 {
		h[i] = e
	}
	return top, h
}
