package tokenize

import (
	"sync"
	"unicode/utf8"
)

// maxPooledScratch bounds the scratch a pooled state keeps, in elements: a
// state that grew past it for one huge piece is dropped, not pooled.
const maxPooledScratch = 1 << 16

// state is the per-call scratch of Count and AppendTokens. It is pooled, so
// steady-state counting allocates nothing.
type state struct {
	_ noCopy

	small smallScratch
	next  []int32 // mergeHeap: next part start, or len(piece)
	prev  []int32 // mergeHeap: previous part start, or -1
	// pairRank[i] is the rank of part i joined with its successor, or noRank.
	pairRank   []uint32
	partRank   []uint32 // mergeHeap: rank of the part starting at i
	heap       []uint64 // mergeHeap: rank<<32 | position
	fixed      []byte   // a piece with invalid UTF-8 replaced by U+FFFD
	buckets    buckets  // mergeBuckets
	cache      pairCache
	pieces     pieceCache
	longPieces longPieceCache
	seam       []uint64 // mergeLong: the previous window's last tokens, offset<<32 | rank
	seamMisses int      // mergeLong: windows that shared no token with their seam (cut instead)
	// noPieceCache makes Count merge every piece that is not a token;
	// benchmarks set it to measure merging itself.
	noPieceCache bool
}

var statePool sync.Pool

// acquireState returns a state from the pool; pair it with releaseState.
func acquireState() *state {
	if v := statePool.Get(); v != nil {
		return v.(*state)
	}
	return &state{}
}

// releaseState returns st to the pool unless it grew past maxPooledScratch
// (the bucket entries past four times that: a merge keeps up to about
// three per byte pending, so a full window's may grow past one per byte,
// and dropping the state would make every long piece allocate anew).
func releaseState(st *state) {
	if cap(st.next) > maxPooledScratch || cap(st.heap) > maxPooledScratch ||
		cap(st.fixed) > maxPooledScratch || cap(st.buckets.pos) > 4*maxPooledScratch {
		return
	}
	statePool.Put(st)
}

// growHeapScratch makes the mergeHeap arrays at least n long.
func (st *state) growHeapScratch(n int) {
	if cap(st.next) < n {
		st.next = make([]int32, n)
		st.prev = make([]int32, n)
		st.pairRank = make([]uint32, n)
		st.partRank = make([]uint32, n)
	}
	st.next, st.prev = st.next[:n], st.prev[:n]
	st.pairRank, st.partRank = st.pairRank[:n], st.partRank[:n]
}

// validUTF8 returns piece, or, when it holds invalid UTF-8, a copy in
// st.fixed with each invalid byte replaced by U+FFFD. That is what the
// tiktoken-go oracle encodes, since it splits []rune(text). The copy is
// valid until the next call.
func (st *state) validUTF8(piece []byte) []byte {
	if utf8.Valid(piece) {
		return piece
	}
	out := st.fixed[:0]
	for i := 0; i < len(piece); {
		r, n := utf8.DecodeRune(piece[i:])
		out = utf8.AppendRune(out, r)
		i += n
	}
	st.fixed = out
	return out
}

// noCopy makes go vet report copies of a pooled struct.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
