package tokenize

import (
	"encoding/binary"
	"unicode/utf8"
)

// Merging a piece of Chinese from its bytes spends two merges per
// character before any word forms. Most characters are tokens, and in most
// places byte-pair merging provably joins a character's bytes before any of
// them joins a neighbour; there the merge starts from the character.
//
// The proof, for one character c of a piece whose bytes, merged alone,
// become the token c by merges of rank at most rank(c): suppose every token
// that contains bytes on both sides of c's left edge, and every one that
// contains bytes on both sides of its right edge, ranks above rank(c).
// Until c is whole, the next merge inside c (rank at most rank(c)) is always
// a candidate, so every merge taken meanwhile ranks at most rank(c); a merge
// that would join a part of c with a neighbour makes a token across one of
// c's edges, which ranks higher, so it is never taken first. The merges
// inside c therefore interleave with others they do not touch, and starting
// from c whole changes neither which merge is lowest (the pairs c whole
// makes with its neighbours cross its edges, so they rank above rank(c) and
// above every merge taken before c is whole) nor which is leftmost among
// equal ranks (a rank is one token; these differ from all others). By
// induction over the characters of the piece, starting with every such
// character whole gives tiktoken's result.
//
// Every token across an edge contains the two bytes at the edge, so the
// lowest rank of any token containing that byte pair bounds it from below.
// The table keeps that bound in the two-byte table's entries of the byte
// pairs that are no token (straddle), and marks in the short index the
// characters that qualify on their own (premergeFlag); neither grows it.

// premergeFlag marks, in the short index entry of a token that is one whole
// multi-byte character c, that c's bytes merged alone become c by merges of
// rank at most rank(c). Bit 61 is unused by short entries.
const premergeFlag = 1 << 61

// When the bytes a, b are no token, pairRank[a<<8|b] is noPair plus
// straddle(a, b): the lowest rank of a token that contains a, b next to each
// other, divided by 16 (so that it fits; the bound stays below the true
// rank), or straddleNone. When ab is a token its entry is its rank, which
// bounds nothing, so a character at such an edge is merged from bytes.
const (
	noPair       = 1 << 31
	straddleNone = 1<<17 - 1 // above every rank (below 2^18) / 16
)

// markPremerge sets premergeFlag on the short index entries of the
// characters that qualify, and the straddle bounds in pairRank. It runs
// after fillIndex and fillPairRanks.
func (t *table) markPremerge() {
	for ab, r := range t.pairRank {
		if r > rankMask {
			t.pairRank[ab] = noPair | straddleNone
		}
	}
	off := 0
	for r := range len(t.lengths) {
		size := int(t.lengths[r])
		tok := t.arena[off : off+size]
		off += size
		// A token pair's entry, its rank, stays: q is above every rank.
		q := noPair | uint32(r)>>4
		for k := 0; k+1 < size; k++ {
			e := &t.pairRank[int(tok[k])<<8|int(tok[k+1])]
			*e = min(*e, q)
		}
		if size > 1 && tok[0] >= 0xC2 && t.isPremergeChar(tok, uint32(r)) {
			t.short[t.shortSlot(tok)] |= premergeFlag
		}
	}
}

// isPremergeChar reports whether tok, the token of rank r, is one
// multi-byte character whose bytes merged alone become tok by merges of
// rank at most r.
func (t *table) isPremergeChar(tok []byte, r uint32) bool {
	if c, n := utf8.DecodeRune(tok); n != len(tok) || c == utf8.RuneError {
		return false
	}
	high, ok := t.mergeAlone(tok)
	return ok && high == r
}

// mergeAlone byte-pair merges c, of two to four bytes, by itself, and
// reports the highest rank merged and whether c became one token.
func (t *table) mergeAlone(c []byte) (uint32, bool) {
	var at [utf8.UTFMax + 1]int // part k is c[at[k]:at[k+1]]
	n := len(c)
	for i := range at {
		at[i] = i
	}
	high := uint32(0)
	for n > 1 {
		low, k := noRank, -1
		for i := 0; i+1 < n; i++ {
			if r, ok := t.lookup(c[at[i]:at[i+2]]); ok && r < low {
				low, k = r, i
			}
		}
		if k < 0 {
			return 0, false
		}
		high = max(high, low)
		copy(at[k+1:], at[k+2:n+1])
		n--
	}
	return high, true
}

// straddleAbove reports whether every token containing the bytes a, b next
// to each other is known to rank above r.
func (t *table) straddleAbove(a, b byte, r uint32) bool {
	return t.pairRank[int(a)<<8|int(b)] > noPair|r>>4
}

// charPart returns the rank of the character of n bytes at p[i], and
// whether the merge of piece p may start from it whole (see above).
func (t *table) charPart(p []byte, i, n int) (uint32, bool) {
	e, ok := t.shortEntry(p[i : i+n])
	if !ok || e&premergeFlag == 0 {
		return 0, false
	}
	r := uint32(e & rankMask)
	if i > 0 && !t.straddleAbove(p[i-1], p[i], r) {
		return 0, false
	}
	if j := i + n; j < len(p) && !t.straddleAbove(p[j-1], p[j], r) {
		return 0, false
	}
	return r, true
}

// initParts writes the parts a merge of p starts from into start and rank:
// part k is p[start[k]:start[k+1]] with rank rank[k], and start[m] is
// len(p) for m parts. Parts are bytes, or whole characters where charPart
// allows. It returns m, or -1 as soon as the parts would not fit.
func (t *table) initParts(p []byte, start []int32, rank []uint32) int {
	m := 0
	for i := 0; i < len(p); {
		if m == len(rank) {
			return -1
		}
		b := p[i]
		if b >= 0xC2 { // starts a multi-byte character
			if n := leadLen(b); i+n <= len(p) {
				if r, ok := t.charPart(p, i, n); ok {
					start[m], rank[m] = int32(i), r
					m++
					i += n
					continue
				}
			}
		}
		start[m], rank[m] = int32(i), t.byteRank[b]
		m++
		i++
	}
	start[m] = int32(len(p))
	return m
}

// leadLen returns the length of the character a lead byte starts, or 0.
func leadLen(b byte) int {
	switch {
	case b >= 0xC2 && b < 0xE0:
		return 2
	case b >= 0xE0 && b < 0xF0:
		return 3
	case b >= 0xF0 && b < 0xF5:
		return 4
	}
	return 0
}

// linkParts links the parts a merge of p starts from (as initParts) in the
// mergeHeap arrays, indexed by byte position, sets pairRank at each part's
// start to the rank of it joined with its successor (noRank elsewhere), and
// returns how many parts there are. next, prev and partRank are not written
// inside a part; nothing reads them there.
func (st *state) linkParts(t *table, p []byte) int {
	n := int32(len(p))
	next, prev, pairRank, partRank := st.next, st.prev, st.pairRank, st.partRank
	if isASCII(p) {
		for i := int32(0); i < n; i++ {
			next[i], prev[i], partRank[i], pairRank[i] = i+1, i-1, t.byteRank[p[i]], noRank
		}
		for i := int32(0); i+1 < n; i++ {
			pairRank[i] = t.pair(p[i], p[i+1])
		}
		return len(p)
	}
	last, parts := int32(-1), 0
	for i := int32(0); i < n; {
		w, r := int32(1), t.byteRank[p[i]]
		if b := p[i]; b >= 0xC2 { // starts a multi-byte character
			if l := leadLen(b); int(i)+l <= len(p) {
				if cr, ok := t.charPart(p, int(i), l); ok {
					w, r = int32(l), cr
					for k := i + 1; k < i+w; k++ {
						pairRank[k] = noRank
					}
				}
			}
		}
		next[i], prev[i], partRank[i], pairRank[i] = i+w, last, r, noRank
		if last >= 0 {
			if w == 1 && i-last == 1 { // two bytes
				pairRank[last] = t.pair(p[last], p[i])
			} else {
				pairRank[last] = st.cache.rank(t, partRank[last], r, p, last, i+w)
			}
		}
		last = i
		i += w
		parts++
	}
	return parts
}

// isASCII reports whether p has no byte above 0x7F, eight bytes at a time.
func isASCII(p []byte) bool {
	var or uint64
	for len(p) >= 8 {
		or |= binary.LittleEndian.Uint64(p)
		p = p[8:]
	}
	for _, b := range p {
		or |= uint64(b)
	}
	return or&0x8080808080808080 == 0
}
