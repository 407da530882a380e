package tokenize

import (
	"math/rand"
	"slices"
	"testing"
	"unicode/utf8"
)

// TestPremergeExact: pieces whose merge starts from whole characters give
// tiktoken's ids: runs of Chinese, Japanese and Korean, emoji, Devanagari,
// Cyrillic, characters after a space or a Latin letter, scripts mixed in
// one piece.
func TestPremergeExact(t *testing.T) {
	f := func(text string) {
		t.Helper()
		checkExact(t, O200k(), []byte(text))
		checkExact(t, Cl100k(), []byte(text))
	}
	f("我们今天讨论的是分词器的性能问题以及如何在不改变结果的情况下加快速度")
	f("東京都の天気は晴れのち曇りで最高気温は二十度の予報です")
	f("大規模言語モデルのトークナイザーはバイト単位で動作します")
	f("한국어문장은띄어쓰기없이도토큰화됩니다")
	f("😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩😘😗")
	f("👨‍👩‍👧‍👦👩🏽‍💻🏳️‍🌈🇯🇵🇰🇷")
	f("हिन्दीमेंलिखागयाएकलंबावाक्यजिसमेंकोईस्थाननहींहै")
	f("Съешьжеещёэтихмягкихфранцузскихбулок")
	f(" 中文 日本語 한국어 русский")
	f("abc中文def日本語ghiРусский한국어")
	f("Ωmega中Ωαβγ文δεζ")
	f("中")
	f("中文")
	f("ﾃｽﾄﾃﾞｰﾀ半角カナ")
	f("𠀀𠀁𠀂𪚥𪚥𪚥")
}

// TestPremergeMatchesBytes: for random pieces of characters from every
// script the tables know, merging from whole characters (where the table
// allows it) gives the same ids as plain byte-pair merging from bytes.
func TestPremergeMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	st := acquireState()
	defer releaseState(st)
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		tab := e.table()
		chars := charTokens(tab)
		premerged := 0
		for _, c := range chars {
			if en, _ := tab.shortEntry(c); en&premergeFlag != 0 {
				premerged++
			}
		}
		t.Logf("%s: %d character tokens, %d may start a merge whole", e.Name(), len(chars), premerged)
		start, rank := make([]int32, 1024), make([]uint32, 1023)
		bytes, parts := 0, 0
		for range 3000 {
			// Characters of one block, with a few others, as in real text.
			base := rng.Intn(len(chars))
			var p []byte
			for n := 2 + rng.Intn(150); len(p) < n; {
				switch k := rng.Intn(20); {
				case k == 0:
					p = append(p, " abcXYZ.,"[rng.Intn(9)])
				case k < 4:
					p = append(p, chars[rng.Intn(len(chars))]...)
				case k < 8:
					r, _ := utf8.DecodeRune(chars[base])
					p = utf8.AppendRune(p, r+rune(rng.Intn(64))-32)
				default: // a neighbour of base among the tokens
					p = append(p, chars[min(max(base+rng.Intn(64)-32, 0), len(chars)-1)]...)
				}
			}
			p = []byte(string([]rune(string(p)))) // invalid runes -> U+FFFD
			bytes, parts = bytes+len(p), parts+tab.initParts(p, start, rank)
			got, _ := st.mergeOne(tab, p, nil, true)
			if want := bytePairMerge(tab, p); !slices.Equal(got, want) {
				t.Fatalf("%s: %q: merge %v, from bytes %v", e.Name(), p, got, want)
			}
		}
		t.Logf("%s: merges started from %d parts for %d bytes", e.Name(), parts, bytes)
	}
}

// charTokens returns every token that is one multi-byte character, in
// code point order.
func charTokens(tab *table) [][]byte {
	var out [][]byte
	off := 0
	for r := range tab.size() {
		size := int(tab.lengths[r])
		tok := tab.arena[off : off+size]
		off += size
		if c, n := utf8.DecodeRune(tok); size > 1 && n == size && c != utf8.RuneError {
			out = append(out, tok)
		}
	}
	slices.SortFunc(out, func(a, b []byte) int {
		ra, _ := utf8.DecodeRune(a)
		rb, _ := utf8.DecodeRune(b)
		return int(ra - rb)
	})
	return out
}

// bytePairMerge is the reference: byte-pair merging from single bytes,
// lowest rank first, leftmost on ties, by rescanning every pair.
func bytePairMerge(tab *table, p []byte) []uint32 {
	at := make([]int, len(p)+1) // part k is p[at[k]:at[k+1]]
	for i := range at {
		at[i] = i
	}
	for {
		low, k := noRank, -1
		for i := 0; i+2 < len(at); i++ {
			if r, ok := tab.lookup(p[at[i]:at[i+2]]); ok && r < low {
				low, k = r, i
			}
		}
		if k < 0 {
			break
		}
		at = append(at[:k+1], at[k+2:]...)
	}
	ids := make([]uint32, 0, len(at)-1)
	for i := 0; i+1 < len(at); i++ {
		r, _ := tab.lookup(p[at[i]:at[i+1]])
		ids = append(ids, r)
	}
	return ids
}
