package tokenize

import "unicode/utf8"

// A piece longer than maxMergePiece is merged in windows of at most that
// many bytes that overlap, and the windows' encodings are joined where
// they agree. The join is exact, by two properties of byte-pair encoding
// (call a token sequence valid when re-encoding its bytes gives it back;
// a text has exactly one valid sequence, its encoding):
//
//   - every run of consecutive tokens of a valid sequence is valid for its
//     bytes: the merges that built those tokens never crossed their edges,
//     so the text alone replays them;
//   - two valid sequences A·t and t·B that share the token t (the same
//     bytes at the same place of the text) make A·t·B valid: the merges
//     that built t are common to both, and a merge that differed in the
//     whole text would have to cross t's edges, and so would have differed
//     in one of the two.
//
// So once the encoding of a window and that of the next, which starts
// inside it, hold a token at the same place, the first window's tokens up
// to it followed by the second's from it on are the encoding of the text
// both cover, and, by induction over the windows, of the whole piece.
// Nothing assumes how far a change at one end of a window reaches into it:
// each join is checked, not predicted.
//
// The windows almost always agree a few tokens after the second one
// starts (it starts on a token of the first; appending text to random
// 3,000-byte pieces changed at most their last 19 bytes' tokens). When
// they hold no common token, the second window is started further back,
// with overlaps of seamFirst to seamMax bytes. A piece whose windows share
// no token even then is cut where the first window ends, as if it were
// two pieces; st.seamMisses counts such cuts, which no input tried has
// produced (TestLongPieceSeamsExact).
const (
	seamFirst = 1 << 10  // overlap of the first attempt, in bytes
	seamMax   = 16 << 10 // widest overlap tried, and the seam kept
)

// mergeLong byte-pair encodes piece, longer than maxMergePiece, window by
// window (see above), with the scratch of one window plus the seam: the
// previous window's tokens over its last seamMax bytes, as offset<<32 |
// rank in st.seam, at most 128 KiB.
func (st *state) mergeLong(t *table, p []byte, dst []uint32, ids bool) ([]uint32, int) {
	count := 0
	base, end := 0, windowEnd(p, 0)
	st.mergeLinked(t, p[:end])
	from := int32(0) // the window's first token not yet counted
	for {
		n := int32(end - base)
		if end == len(p) {
			for i := from; i < n; i = st.next[i] {
				count++
				if ids {
					dst = append(dst, st.partRank[i])
				}
			}
			return dst, count
		}
		// Count the window's tokens up to the seam; keep the rest.
		keep := end - seamMax
		seam := st.seam[:0]
		for i := from; i < n; i = st.next[i] {
			if base+int(i) < keep {
				count++
				if ids {
					dst = append(dst, st.partRank[i])
				}
				continue
			}
			seam = append(seam, uint64(i)<<32|uint64(st.partRank[i]))
		}
		st.seam = seam
		s := seamAt{base: base, end: end}
		var k int
		base, end, k, from = st.join(t, p, s)
		count += k
		if ids {
			for _, e := range st.seam[:k] {
				dst = append(dst, uint32(e))
			}
		}
	}
}

// seamAt places st.seam in the piece: base is the start of the window its
// offsets count from, end where that window ended.
type seamAt struct{ base, end int }

// join merges the window after the seam s and finds where it joins: the
// window's first token that the seam holds at the same place. It returns
// the window (base, end), how many seam tokens precede the joining token
// (k, to be counted), and the joining token's offset in the window (from,
// the window's first token to count). Each overlap tried is merged anew;
// when none joins, the window starts where the seam ends, and every seam
// token counts.
func (st *state) join(t *table, p []byte, s seamAt) (base, end, k int, from int32) {
	tried := -1
	for overlap := seamFirst; overlap <= seamMax; overlap *= 4 {
		base = st.seamStart(p, s, s.end-overlap)
		if base == tried {
			continue
		}
		tried = base
		end = windowEnd(p, base)
		st.mergeLinked(t, p[base:end])
		if k, from, ok := st.junction(s, base); ok {
			return base, end, k, from
		}
	}
	st.seamMisses++
	base, end = s.end, windowEnd(p, s.end)
	st.mergeLinked(t, p[base:end])
	return base, end, len(st.seam), 0
}

// seamStart returns where a window that overlaps the seam by about
// s.end-at bytes starts: the first seam token at or after at that starts
// a character (a window is merged from whole characters), or the seam's
// first such token, or, with none, s.end.
func (st *state) seamStart(p []byte, s seamAt, at int) int {
	for _, e := range st.seam {
		if pos := s.base + int(e>>32); pos >= at && utf8.RuneStart(p[pos]) {
			return pos
		}
	}
	return s.end
}

// junction finds the first token of the window merged at base (in st.next
// and st.partRank) that the seam holds at the same place: the same start
// and end, so the same bytes and rank. It returns the seam index and the
// window offset of that token.
func (st *state) junction(s seamAt, base int) (k int, at int32, ok bool) {
	next := st.next
	n := int32(len(next))
	i := int32(0)
	for k, e := range st.seam {
		start := s.base + int(e>>32)
		if start < base {
			continue
		}
		stop := s.end
		if k+1 < len(st.seam) {
			stop = s.base + int(st.seam[k+1]>>32)
		}
		for i < n && base+int(i) < start {
			i = next[i]
		}
		if i >= n {
			return 0, 0, false
		}
		if base+int(i) == start && base+int(next[i]) == stop && st.partRank[i] == uint32(e) {
			return k, i, true
		}
	}
	return 0, 0, false
}

// windowEnd returns where the window that starts at base ends: the piece's
// end, or the last character start at most maxMergePiece bytes on.
func windowEnd(p []byte, base int) int {
	if len(p)-base <= maxMergePiece {
		return len(p)
	}
	cut := base + maxMergePiece
	for cut > base && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return cut
}

// mergeLinked merges w, at least a few characters long, leaving its
// tokens linked in st.next and st.partRank (mergeHeap and mergeBuckets
// do; the small merges keep their own lists).
func (st *state) mergeLinked(t *table, w []byte) {
	if len(w) < bucketPiece {
		st.mergeHeap(t, w, nil, false)
		return
	}
	st.mergeBuckets(t, w, nil, false)
}
