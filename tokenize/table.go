package tokenize

//go:generate go run gen_tables.go

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"

	"slipstream/pool"
)

const (
	// rankBits is how many low bits of an index entry hold rank+1. 2^18 is
	// above the largest vocabulary (o200k_base, 199,998 tokens).
	rankBits = 18
	rankMask = 1<<rankBits - 1
	// noRank marks "no token" in merge scratch arrays; it is above every rank.
	noRank = ^uint32(0)
)

// tableBuilds counts table builds in this process. Tests use it to check that
// each encoding builds its table exactly once.
var tableBuilds atomic.Int64

// TableBuilds returns how many encoding tables this process has built:
// at most one per encoding, however many callers count (tests of the
// server assert this across routes).
func TableBuilds() int64 { return tableBuilds.Load() }

// table maps token bytes to ranks and back.
//
// The token bytes live in one read-only arena that aliases the embedded blob,
// so they cost no heap. offsets[r]:offsets[r+1] is token r within arena. index
// is an open-addressing hash table with linear probing: each non-zero entry
// holds rank+1 in its low rankBits bits and a tag of the key's hash in the
// high bits, so most probes that miss never touch the arena.
//
// A table is immutable after newTable returns and safe for concurrent use.
type table struct {
	arena    []byte
	offsets  []uint32
	index    []uint32
	mask     uint32
	maxLen   int
	byteRank [256]uint32
	// pairRank[a<<8|b] is the rank of the two-byte token ab, or noRank:
	// the first round of every merge looks up all adjacent byte pairs.
	pairRank []uint32
}

// newTable builds a table from a blob written by gen_tables.go.
//
// blob must stay alive and unmodified for the life of the table (it is an
// embedded string). A malformed blob is a build defect and panics.
func newTable(blob string) *table {
	tableBuilds.Add(1)
	if len(blob) < 8 || blob[:4] != "SLTK" {
		panic("BUG: tokenize: table blob has no SLTK header")
	}
	n := int(binary.LittleEndian.Uint32(pool.S2B(blob[4:8])))
	lengths := blob[8 : 8+n]
	t := &table{
		arena:   pool.S2B(blob[8+n:]),
		offsets: make([]uint32, n+1),
	}
	t.fillOffsets(lengths)
	t.fillIndex(n)
	t.fillByteRanks()
	t.fillPairRanks()
	return t
}

func (t *table) fillOffsets(lengths string) {
	off := uint32(0)
	for i := 0; i < len(lengths); i++ {
		t.offsets[i] = off
		off += uint32(lengths[i])
		t.maxLen = max(t.maxLen, int(lengths[i]))
	}
	t.offsets[len(lengths)] = off
	if int(off) != len(t.arena) {
		panic("BUG: tokenize: table blob lengths do not match its token bytes")
	}
}

// fillIndex sizes the index to the power of two at least 2n (load factor
// at most 0.5), which keeps probe sequences short for the misses that
// dominate merging.
func (t *table) fillIndex(n int) {
	size := 1
	for size < 2*n {
		size <<= 1
	}
	t.index = make([]uint32, size)
	t.mask = uint32(size - 1)
	for r := 0; r < n; r++ {
		h := hashBytes(t.token(uint32(r)))
		i := uint32(h) & t.mask
		for t.index[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.index[i] = tagOf(h) | uint32(r+1)
	}
}

func (t *table) fillByteRanks() {
	var b [1]byte
	for i := range t.byteRank {
		b[0] = byte(i)
		r, ok := t.lookup(b[:])
		if !ok {
			panic("BUG: tokenize: table lacks a single-byte token")
		}
		t.byteRank[i] = r
	}
}

func (t *table) fillPairRanks() {
	t.pairRank = make([]uint32, 1<<16)
	for i := range t.pairRank {
		t.pairRank[i] = noRank
	}
	for r := range t.size() {
		if tok := t.token(uint32(r)); len(tok) == 2 {
			t.pairRank[int(tok[0])<<8|int(tok[1])] = uint32(r)
		}
	}
}

// pair returns the rank of the two-byte token ab, or noRank.
func (t *table) pair(a, b byte) uint32 {
	return t.pairRank[int(a)<<8|int(b)]
}

func tagOf(h uint64) uint32 {
	return uint32(h>>(64-(32-rankBits))) << rankBits
}

// token returns the bytes of token r. The slice aliases the read-only arena:
// callers must never modify it.
func (t *table) token(r uint32) []byte {
	return t.arena[t.offsets[r]:t.offsets[r+1]]
}

// size returns the number of tokens in the table.
func (t *table) size() int {
	return len(t.offsets) - 1
}

// lookup returns the rank of the token whose bytes equal b.
func (t *table) lookup(b []byte) (uint32, bool) {
	if len(b) > t.maxLen {
		return 0, false
	}
	h := hashBytes(b)
	tag := tagOf(h)
	for i := uint32(h) & t.mask; ; i = (i + 1) & t.mask {
		e := t.index[i]
		if e == 0 {
			return 0, false
		}
		if e&^rankMask == tag {
			r := e&rankMask - 1
			if string(t.token(r)) == string(b) {
				return r, true
			}
		}
	}
}

// hashBytes hashes a token-sized byte string. It is inlined into lookup
// and reads at most two 8-byte words for the short keys that dominate
// merging, which makes it about twice as fast as hash/maphash here.
// It need not resist flooding: the keys it sees are bounded by the table's
// longest token and every probe sequence is bounded by the load factor.
func hashBytes(b []byte) uint64 {
	const k0, k1 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F
	n := len(b)
	var x, y uint64
	switch {
	case n >= 8:
		x = binary.LittleEndian.Uint64(b)
		y = binary.LittleEndian.Uint64(b[n-8:])
		for i := 8; i < n-8; i += 8 {
			x = mix(x^k0, binary.LittleEndian.Uint64(b[i:])^k1)
		}
	case n >= 4:
		x = uint64(binary.LittleEndian.Uint32(b))
		y = uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		x = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mix(x^k0^uint64(n), y^k1)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}
