package tokenize

import "unicode/utf8"

// smallParts is the most parts a piece may start with to be merged by the
// quadratic scan; pieces with more use the heap. The scan is faster for
// the short pieces that dominate text, the heap bounds the worst case at
// O(n log n). 24 bytes beat 32 and 48 on BenchmarkCount all1MB (CJK pieces
// of 30-60 bytes) by 3-15%, alternated, when parts were bytes.
const smallParts = 24

// merge byte-pair encodes piece, a pre-tokenizer piece that is not itself a
// token, and returns how many tokens it became. When ids is set, the token
// ranks are appended to dst.
//
// The result equals tiktoken's: repeatedly merge the adjacent pair whose
// concatenation has the lowest rank, the leftmost one on ties.
//
// A piece longer than maxMergePiece is merged in overlapping windows whose
// encodings are joined where they agree (mergeLong).
func (st *state) merge(t *table, piece []byte, dst []uint32, ids bool) ([]uint32, int) {
	if len(piece) > maxMergePiece {
		return st.mergeLong(t, piece, dst, ids)
	}
	return st.mergeOne(t, piece, dst, ids)
}

// maxMergePiece bounds the piece one merge handles. Merging keeps about
// 44 bytes of scratch per byte of piece, so an unbounded piece (60 MB of
// one repeated character, which the pre-tokenizer cannot split, sent by a
// client) would cost gigabytes in one call. Longer pieces, which only
// pathological input produces, are merged in windows of this size
// (longmerge.go): under 3 MB of scratch, and the same tokens as a merge of
// the whole piece.
const maxMergePiece = 64 << 10

// mergeOne byte-pair encodes one piece of at most maxMergePiece bytes.
func (st *state) mergeOne(t *table, piece []byte, dst []uint32, ids bool) ([]uint32, int) {
	if isASCII(piece) {
		if len(piece) <= smallParts {
			return st.mergeSmallBytes(t, piece, dst, ids)
		}
	} else if len(piece) <= utf8.UTFMax*smallParts {
		if m := t.initParts(piece, st.small.start[:], st.small.rank[:]); m >= 0 {
			return st.mergeSmall(t, piece, m, dst, ids)
		}
	}
	if len(piece) < bucketPiece {
		return st.mergeHeap(t, piece, dst, ids)
	}
	return st.mergeBuckets(t, piece, dst, ids)
}

// mergeSmall merges the m parts initParts wrote into st.small. It keeps
// them in a linked list and finds the lowest pair by scanning all pair
// slots after every merge: O(m^2), with no heap and no moves. The scan is
// branch-free (min), then stops at the leftmost pair of that rank.
// Absorbed parts keep noRank in their pair slot.
func (st *state) mergeSmall(t *table, p []byte, m int, dst []uint32, ids bool) ([]uint32, int) {
	s := &st.small
	rank, pairs, start := s.rank[:m], s.pairs[:m], s.start[:m+1]
	next, prev := s.next[:m], s.prev[:m]
	c := &st.cache
	for k := range m {
		next[k], prev[k], pairs[k] = int8(k+1), int8(k-1), noRank
	}
	for k := 0; k+1 < m; k++ {
		if from := start[k]; start[k+2]-from == 2 { // two bytes
			pairs[k] = t.pair(p[from], p[from+1])
		} else {
			pairs[k] = c.rank(t, rank[k], rank[k+1], p, from, start[k+2])
		}
	}
	parts := m
	for {
		low := noRank
		for _, r := range pairs {
			low = min(low, r)
		}
		if low > rankMask { // no pair is a token
			break
		}
		k := 0
		for pairs[k] != low {
			k++
		}
		// Part k absorbs its successor j; the pairs on either side of the
		// new part change.
		j := int(next[k])
		nj := int(next[j])
		rank[k], next[k], pairs[j], pairs[k] = low, int8(nj), noRank, noRank
		parts--
		if nj < m {
			prev[nj] = int8(k)
			pairs[k] = c.rank(t, low, rank[nj], p, start[k], start[next[nj]])
		}
		if pk := int(prev[k]); pk >= 0 {
			pairs[pk] = c.rank(t, rank[pk], low, p, start[pk], start[nj])
		}
	}
	if ids {
		for k := 0; k < m; k = int(next[k]) {
			dst = append(dst, rank[k])
		}
	}
	return dst, parts
}

// mergeSmallBytes is mergeSmall for a piece of at most smallParts ASCII
// bytes, whose parts start as its bytes: the list is over byte positions,
// with no part starts to look up. It is kept apart because it is that much
// faster on the short ASCII pieces that dominate merging in English and
// code (BenchmarkMerge small/8: 86 -> 71 ns, best of 10).
func (st *state) mergeSmallBytes(t *table, p []byte, dst []uint32, ids bool) ([]uint32, int) {
	s := &st.small
	n := len(p)
	rank, pairs := s.rank[:n], s.pairs[:n]
	next, prev := s.next[:n], s.prev[:n]
	for i := range p {
		rank[i], next[i], prev[i], pairs[i] = t.byteRank[p[i]], int8(i+1), int8(i-1), noRank
	}
	for i := 0; i+1 < n; i++ {
		pairs[i] = t.pair(p[i], p[i+1])
	}
	c := &st.cache
	parts := n
	for {
		low := noRank
		for _, r := range pairs {
			low = min(low, r)
		}
		if low > rankMask { // no pair is a token
			break
		}
		k := 0
		for pairs[k] != low {
			k++
		}
		// Part k absorbs its successor m; the pairs on either side of the
		// new part change.
		m := int(next[k])
		nm := int(next[m])
		rank[k], next[k], pairs[m], pairs[k] = low, int8(nm), noRank, noRank
		parts--
		if nm < n {
			prev[nm] = int8(k)
			pairs[k] = c.rank(t, low, rank[nm], p, int32(k), int32(next[nm]))
		}
		if pk := int(prev[k]); pk >= 0 {
			pairs[pk] = c.rank(t, rank[pk], low, p, int32(pk), int32(nm))
		}
	}
	if ids {
		for i := 0; i < n; i = int(next[i]) {
			dst = append(dst, rank[i])
		}
	}
	return dst, parts
}

// smallScratch is mergeSmall's scratch, sized for the most parts it
// merges.
type smallScratch struct {
	rank, pairs [smallParts]uint32
	start       [smallParts + 1]int32
	next, prev  [smallParts]int8
}

// mergeHeap keeps the parts in a doubly linked list over byte positions and
// the candidate pairs in a min-heap keyed by (rank, position), so each merge
// costs O(log n). Heap entries are not removed when a merge invalidates them;
// an entry is live only while pairRank still holds its rank, which works
// because a part only grows and ranks identify byte strings uniquely.
func (st *state) mergeHeap(t *table, p []byte, dst []uint32, ids bool) ([]uint32, int) {
	n := int32(len(p))
	st.growHeapScratch(int(n))
	next, prev, pairRank, partRank := st.next, st.prev, st.pairRank, st.partRank
	if cap(st.heap) < len(p) {
		st.heap = make([]uint64, 0, len(p)+len(p)/2)
	}
	h := st.heap[:0]
	c := &st.cache
	parts := st.linkParts(t, p)
	for i := int32(0); i < n; i++ {
		if r := pairRank[i]; r <= rankMask {
			h = append(h, heapEntry(r, i))
		}
	}
	heapInit(h)
	for len(h) > 0 {
		var e uint64
		e, h = heapPop(h)
		r, i := uint32(e>>32), int32(e)
		if pairRank[i] != r {
			continue
		}
		j := next[i]
		k := next[j]
		next[i], partRank[i], pairRank[j] = k, r, noRank
		if k < n {
			prev[k] = i
		}
		parts--
		pairRank[i] = noRank
		if k < n {
			if r2 := c.rank(t, r, partRank[k], p, i, next[k]); r2 != noRank {
				pairRank[i] = r2
				h = heapPush(h, heapEntry(r2, i))
			}
		}
		if pi := prev[i]; pi >= 0 {
			pairRank[pi] = c.rank(t, partRank[pi], r, p, pi, k)
			if pairRank[pi] != noRank {
				h = heapPush(h, heapEntry(pairRank[pi], pi))
			}
		}
	}
	st.heap = h
	if ids {
		for i := int32(0); i < n; i = next[i] {
			dst = append(dst, partRank[i])
		}
	}
	return dst, parts
}

func heapEntry(rank uint32, pos int32) uint64 {
	return uint64(rank)<<32 | uint64(uint32(pos))
}

// The heap is 4-ary: half the depth of a binary heap, and the four
// children of a node share a cache line, which makes the pops that dominate
// long merges about twice as fast (BenchmarkRun100KB).

func heapInit(h []uint64) {
	if len(h) < 2 {
		return // (len-2)/4 rounds to 0: an empty heap would be indexed
	}
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		heapDown(h, i)
	}
}

func heapPush(h []uint64, e uint64) []uint64 {
	h = append(h, e)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 4
		if h[parent] <= e {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = e
	return h
}

func heapPop(h []uint64) (uint64, []uint64) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	if last > 0 {
		heapDown(h, 0)
	}
	return top, h
}

func heapDown(h []uint64, i int) {
	e := h[i]
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if h[k] < h[m] {
				m = k
			}
		}
		if e <= h[m] {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}
