package tokenize

//go:generate go run gen_tables.go

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"sync/atomic"

	"slipstream/pool"
)

const (
	// rankBits is how many low bits of an index entry hold the rank. 2^18 is
	// above the largest vocabulary (o200k_base, 199,998 tokens).
	rankBits = 18
	rankMask = 1<<rankBits - 1
	// noRank marks "no token" in merge scratch arrays; it is above every rank.
	noRank = ^uint32(0)
	// shortMax is the longest token whose bytes an index entry holds.
	shortMax = 5
	// slotsPerToken sizes the indexes: a load factor of 0.57 keeps misses,
	// which dominate merging, at about three probes, and the indexes no
	// larger than the offsets and the 4-byte index they replaced.
	slotsPerToken = 1.75
)

// Index entries are 64 bits, laid out so that one probe answers most
// lookups without touching the arena:
//
//	short token (1-5 bytes): bit 63 = 0, bits 21-60 the bytes (first byte
//	lowest), bits 18-20 the length, bits 0-17 the rank;
//	long token: bit 63 = 1, bits 47-62 a tag of the hash, bits 39-46 the
//	length, bits 18-38 the token's offset in the arena, bits 0-17 the rank.
//
// Zero is an empty slot: a short entry has a non-zero length, a long one
// bit 63.
const (
	longFlag  = 1 << 63
	keyShift  = rankBits                 // a short key: length and bytes above the rank
	offShift  = rankBits                 // a long entry: offset above the rank
	offBits   = 21                       // arena offsets below 2 MiB
	lenShift  = offShift + 21            // a long entry's length
	longKey   = ^uint64(1<<lenShift - 1) // flag, tag and length of a long entry
	offMask   = 1<<offBits - 1
	tagShift  = 47
	maxArena  = 1 << offBits
	maxLength = 255
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
// so they cost no heap. short and long are open-addressing hash tables
// with linear probing over 64-bit entries (see above): a token of up to
// five bytes is found by comparing one entry, a longer one by its entry's
// tag and length and then its bytes in the arena.
//
// A table is immutable after newTable returns (offsets, for Decode, is
// built on first use) and safe for concurrent use.
type table struct {
	arena    []byte
	lengths  string   // lengths[r] is the length of token r
	short    []uint64 // index of the tokens of 1 to shortMax bytes
	long     []uint64 // index of the longer tokens
	maxLen   int
	byteRank [256]uint32
	// pairRank[a<<8|b] is the rank of the two-byte token ab: the first
	// round of every merge looks up all adjacent byte pairs. When ab is
	// no token it is above rankMask and holds a bound for premerging
	// (see premerge.go).
	pairRank []uint32

	// id tells this table's entries apart in a pairCache: bits 54-55,
	// non-zero.
	id uint64

	offsetsOnce sync.Once
	offsets     []uint32 // offsets[r] is token r's offset in arena; see token
}

// newTable builds a table from a blob written by gen_tables.go.
//
// blob must stay alive and unmodified for the life of the table (it is an
// embedded string). A malformed blob is a build defect and panics.
// id is 1, 2 or 3, unique among the tables one state is used with.
func newTable(blob string, id uint64) *table {
	tableBuilds.Add(1)
	if len(blob) < 8 || blob[:4] != "SLTK" {
		panic("BUG: tokenize: table blob has no SLTK header")
	}
	n := int(binary.LittleEndian.Uint32(pool.S2B(blob[4:8])))
	t := &table{
		arena:   pool.S2B(blob[8+n:]),
		lengths: blob[8 : 8+n],
		id:      id << 54,
	}
	if len(t.arena) > maxArena {
		panic("BUG: tokenize: table arena exceeds 2 MiB")
	}
	t.fillIndex()
	t.fillByteRanks()
	t.fillPairRanks()
	t.markPremerge()
	return t
}

// fillIndex inserts every token in rank order: tokens of up to shortMax
// bytes into short, the others into long. Kept apart, the short index
// (1.1 MB for o200k_base), which answers nearly all lookups that merging
// makes, stays in the CPU's L2 cache.
func (t *table) fillIndex() {
	n := len(t.lengths)
	nShort := 0
	for r := range n {
		if t.lengths[r] <= shortMax {
			nShort++
		}
	}
	t.short = make([]uint64, int(float64(nShort)*slotsPerToken)+1)
	t.long = make([]uint64, int(float64(n-nShort)*slotsPerToken)+1)
	off := 0
	for r := range n {
		size := int(t.lengths[r])
		tok := t.arena[off : off+size]
		if size <= shortMax {
			k := shortKey(tok)
			insert(t.short, hashShort(k), k|uint64(r))
		} else {
			h := hashBytes(tok)
			insert(t.long, h, longFlag|tagOf(h)|uint64(size)<<lenShift|uint64(off)<<offShift|uint64(r))
		}
		t.maxLen = max(t.maxLen, size)
		off += size
	}
	if off != len(t.arena) {
		panic("BUG: tokenize: table blob lengths do not match its token bytes")
	}
}

func insert(index []uint64, h, e uint64) {
	i := slot(index, h)
	for index[i] != 0 {
		if i++; i == len(index) {
			i = 0
		}
	}
	index[i] = e
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
	off := 0
	for r := range len(t.lengths) {
		if size := int(t.lengths[r]); size == 2 {
			t.pairRank[int(t.arena[off])<<8|int(t.arena[off+1])] = uint32(r)
		}
		off += int(t.lengths[r])
	}
}

// pair returns the rank of the two-byte token ab, or, when ab is not a
// token, a value above rankMask (not always noRank: see premerge.go).
func (t *table) pair(a, b byte) uint32 {
	return t.pairRank[int(a)<<8|int(b)]
}

// slot maps a hash to its home slot (Lemire's multiply-shift reduction,
// since the index size is not a power of two).
func slot(index []uint64, h uint64) int {
	return int((h >> 32) * uint64(len(index)) >> 32)
}

func tagOf(h uint64) uint64 {
	return (h & 0xFFFF) << tagShift
}

// shortKey packs a token of 1 to shortMax bytes and its length into the
// high bits of an index entry.
func shortKey(b []byte) uint64 {
	if cap(b) >= 8 {
		// One load within b's capacity, masked to its length: no branch
		// on the length.
		x := binary.LittleEndian.Uint64(b[:8]) & (1<<(8*uint(len(b))) - 1)
		return x<<(keyShift+3) | uint64(len(b))<<keyShift
	}
	return shortKeySlow(b)
}

func shortKeySlow(b []byte) uint64 {
	var x uint64
	switch n := len(b); n {
	case 5:
		x = uint64(binary.LittleEndian.Uint32(b)) | uint64(b[4])<<32
	case 4:
		x = uint64(binary.LittleEndian.Uint32(b))
	case 3:
		x = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
	case 2:
		x = uint64(b[0]) | uint64(b[1])<<8
	case 1:
		x = uint64(b[0])
	}
	return x<<(keyShift+3) | uint64(len(b))<<keyShift
}

func hashShort(k uint64) uint64 {
	return mix(k^0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)
}

// token returns the bytes of token r. The slice aliases the read-only arena:
// callers must never modify it. The first call builds the offsets (0.8 MB
// for o200k_base), which only Decode and tests need.
func (t *table) token(r uint32) []byte {
	t.offsetsOnce.Do(t.fillOffsets)
	return t.arena[t.offsets[r]:t.offsets[r+1]]
}

func (t *table) fillOffsets() {
	t.offsets = make([]uint32, len(t.lengths)+1)
	off := uint32(0)
	for i := 0; i < len(t.lengths); i++ {
		t.offsets[i] = off
		off += uint32(t.lengths[i])
	}
	t.offsets[len(t.lengths)] = off
}

// size returns the number of tokens in the table.
func (t *table) size() int {
	return len(t.lengths)
}

// lookup returns the rank of the token whose bytes equal b.
func (t *table) lookup(b []byte) (uint32, bool) {
	if len(b) <= shortMax {
		return t.lookupShort(b)
	}
	return t.lookupLong(b)
}

func (t *table) lookupShort(b []byte) (uint32, bool) {
	e, ok := t.shortEntry(b)
	return uint32(e & rankMask), ok
}

// shortSlot returns the position in the short index of the token whose
// bytes equal b, which must be in it.
func (t *table) shortSlot(b []byte) int {
	k := shortKey(b)
	for i := slot(t.short, hashShort(k)); ; {
		if t.short[i]&^(rankMask|premergeFlag) == k {
			return i
		}
		if i++; i == len(t.short) {
			i = 0
		}
	}
}

// shortEntry returns the short index entry of the token whose bytes equal
// b, of at most shortMax bytes.
func (t *table) shortEntry(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	k := shortKey(b)
	index := t.short
	for i := slot(index, hashShort(k)); ; {
		e := index[i]
		if e&^(rankMask|premergeFlag) == k {
			return e, true
		}
		if e == 0 {
			return 0, false
		}
		if i++; i == len(index) {
			i = 0
		}
	}
}

func (t *table) lookupLong(b []byte) (uint32, bool) {
	if len(b) > t.maxLen {
		return 0, false
	}
	h := hashBytes(b)
	k := longFlag | tagOf(h) | uint64(len(b))<<lenShift
	index := t.long
	for i := slot(index, h); ; {
		e := index[i]
		if e&longKey == k {
			off := int(e >> offShift & offMask)
			if equalLong(t.arena[off:off+len(b)], b) {
				return uint32(e & rankMask), true
			}
		}
		if e == 0 {
			return 0, false
		}
		if i++; i == len(index) {
			i = 0
		}
	}
}

// equalLong reports whether a and b, of the same length above shortMax,
// are equal; up to 16 bytes it compares two overlapping words each.
func equalLong(a, b []byte) bool {
	n := len(b)
	if n > 16 || len(a) != n {
		return string(a) == string(b)
	}
	if n <= 8 {
		return binary.LittleEndian.Uint32(a) == binary.LittleEndian.Uint32(b) &&
			binary.LittleEndian.Uint32(a[n-4:]) == binary.LittleEndian.Uint32(b[n-4:])
	}
	return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
		binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
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
