package tokenize

import (
	"bytes"
	"math/rand"
	"runtime"
	"testing"
	"unicode/utf8"
)

// TestLongPieceExact: pieces up to 64 KiB, which the pre-tokenizer cannot
// split, get tiktoken's ids, merged whole. The oracle is quadratic, so this
// takes seconds and is skipped with -short.
func TestLongPieceExact(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: the tiktoken-go oracle takes seconds per long piece")
	}
	rng := rand.New(rand.NewSource(1))
	dna := make([]byte, maxMergePiece)
	for i := range dna {
		dna[i] = "acgt"[rng.Intn(4)]
	}
	checkExact(t, O200k(), append([]byte("x"), bytes.Repeat([]byte("a"), maxMergePiece-1)...))
	checkExact(t, Cl100k(), bytes.Repeat([]byte("abc"), maxMergePiece/3))
	checkExact(t, O200k(), dna)
}

// TestLongPieceBeyondWindowExact: a piece longer than one merge window
// gets tiktoken's ids. This one ("x" then 65 KiB of "a") was one token
// over when windows were cut instead of joined.
func TestLongPieceBeyondWindowExact(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: the tiktoken-go oracle takes seconds per long piece")
	}
	checkExact(t, O200k(), append([]byte("x"), bytes.Repeat([]byte("a"), maxMergePiece+1001)...))
}

// TestLongPieceSeamsExact: merging a long piece window by window gives the
// same tokens as merging it whole (the reference, which TestLongPieceExact
// ties to tiktoken), every window joining its predecessor at a shared
// token, on pieces the pre-tokenizer cannot split: runs of one character,
// small alphabets whose merges chain, random letters, scripts whose
// characters are tokens and ones whose are not, windows cut inside
// characters' reach.
func TestLongPieceSeamsExact(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pick := func(alphabet ...string) func() []byte {
		return func() []byte { return []byte(alphabet[rng.Intn(len(alphabet))]) }
	}
	letters := make([]string, 26)
	for i := range letters {
		letters[i] = string(rune('a' + i))
	}
	printable := make([]string, 0, 95)
	for c := ' '; c <= '~'; c++ {
		printable = append(printable, string(c))
	}
	gens := []struct {
		name string
		next func() []byte
	}{
		{"a", pick("a")},
		{"ab", pick("a", "b")},
		{"abc-cycle", func() func() []byte { i := 0; return func() []byte { i++; return []byte{"abc"[i%3]} } }()},
		{"dna", pick("a", "c", "g", "t")},
		{"letters", pick(letters...)},
		{"printable", pick(printable...)},
		{"syllables", pick("the", "an", "ing", "er", "ed", "s", "tion", "al")},
		{"han-one", pick("中")},
		{"han", pick("中", "文", "字", "的", "是", "不", "了", "人", "我", "在", "有", "他", "这", "为", "之")},
		{"cyrillic", pick("п", "р", "и", "в", "е", "т", "м", "о", "с")},
		{"emoji", pick("😀", "🚀", "🎉", "👍🏽", "🧪")},
		{"mixed", pick("a", "中", "é", "=", "😀", "ab", "ü")},
	}
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		tab := e.table()
		for _, g := range gens {
			for _, size := range []int{maxMergePiece + 1, 2*maxMergePiece + 3, 150_000 + rng.Intn(150_000)} {
				var p []byte
				if g.name == "a" || g.name == "han-one" {
					p = append([]byte("x"), bytes.Repeat(g.next(), size)...)[:size]
					for !utf8.Valid(p) {
						p = p[:len(p)-1]
					}
				} else {
					for len(p) < size {
						p = append(p, g.next()...)
					}
				}
				checkSeams(t, e.Name()+"/"+g.name, tab, p)
			}
		}
		// Small alphabets in random mixes and long runs with rare breaks,
		// up to 460 KB.
		alphabets := [][]string{{"a", "a", "a", "b"}, {"ab", "ba", "a"}, {"x", "y", "z", "xy"},
			{"é", "e"}, {"=", "-", "="}, {"the", "re", "ther", "e"}, {"ا", "ل", "م"}, {"\t", " "}}
		for range 20 {
			al := alphabets[rng.Intn(len(alphabets))]
			size := maxMergePiece + rng.Intn(400_000)
			var p []byte
			for len(p) < size {
				if rng.Intn(2) == 0 {
					p = append(p, bytes.Repeat([]byte(al[0]), 1+rng.Intn(5000))...)
				}
				p = append(p, al[rng.Intn(len(al))]...)
			}
			checkSeams(t, e.Name()+"/mix", tab, p)
		}
	}
}

// checkSeams compares the windowed merge of p with its whole merge, ids and
// count, and fails on a window that was cut instead of joined.
func checkSeams(t *testing.T, name string, tab *table, p []byte) {
	t.Helper()
	whole := &state{}
	want, n := whole.mergeOne(tab, p, nil, true)
	st := &state{}
	got, k := st.merge(tab, p, nil, true)
	if i := firstDiff(got, want); i >= 0 || k != n || len(got) != len(want) {
		t.Fatalf("%s, %d bytes: windowed merge differs from the whole merge at token %d (%d tokens, want %d)", name, len(p), i, k, n)
	}
	if _, c := st.merge(tab, p, nil, false); c != n {
		t.Fatalf("%s, %d bytes: windowed count %d, want %d", name, len(p), c, n)
	}
	if st.seamMisses != 0 {
		t.Fatalf("%s, %d bytes: %d windows shared no token with their predecessor", name, len(p), st.seamMisses)
	}
}

// TestLongPieceMemoryBounded: a piece the pre-tokenizer cannot split (1 MB
// of one character, as a hostile client may send) is merged in 64 KiB
// windows, so one Count call stays within a few MB of scratch instead of
// about 44 bytes per input byte.
func TestLongPieceMemoryBounded(t *testing.T) {
	e := O200k()
	text := bytes.Repeat([]byte("a"), 1<<20)
	e.Count(text[:1024]) // build the table outside the measurement
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := e.Count(text)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("counting 1 MB of one character allocated %d bytes, want <= 8 MiB", alloc)
	}
	// tiktoken merges runs of 'a' into 8-byte tokens.
	if n != 1<<20/8 {
		t.Fatalf("count %d, want %d", n, 1<<20/8)
	}
}

// TestJunction: a window joins its seam only at a token with the same
// start, end and rank; one that only starts at the same place does not.
func TestJunction(t *testing.T) {
	st := &state{}
	s := seamAt{base: 100, end: 110}
	// Seam tokens: [100,103) rank 1, [103,106) rank 2, [106,110) rank 3.
	st.seam = []uint64{0<<32 | 1, 3<<32 | 2, 6<<32 | 3}
	// The window at 103: [103,105), [105,106), [106,110), [110,113).
	st.next = []int32{2, 0, 3, 7, 0, 0, 0, 10, 0, 0}
	st.partRank = []uint32{7, 0, 8, 3, 0, 0, 0, 9, 0, 0}
	if k, at, ok := st.junction(s, 103); !ok || k != 2 || at != 3 {
		t.Fatalf("junction = %d, %d, %v; want seam token 2 at window offset 3", k, at, ok)
	}
	st.partRank[3] = 4 // same place, another token: impossible in a real merge, refused
	if k, at, ok := st.junction(s, 103); ok {
		t.Fatalf("junction = %d, %d, joined on a rank that differs", k, at)
	}
}
