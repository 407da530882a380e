package tokenize

import (
	"bytes"
	"math/rand"
	"runtime"
	"testing"
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

// TestLongPieceSegments: a piece over 64 KiB is merged in segments, each
// exact, so its count is within one token per segment of tiktoken's.
func TestLongPieceSegments(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: the tiktoken-go oracle takes seconds per long piece")
	}
	e := O200k()
	text := append([]byte("x"), bytes.Repeat([]byte("a"), maxMergePiece+1001)...)
	want := len(oracleIDs(t, e.Name(), text))
	segments := (len(text) + maxMergePiece - 1) / maxMergePiece
	if n := e.Count(text); n < want-segments || n > want+segments {
		t.Errorf("%s: %d tokens for %d bytes, tiktoken %d: more than one per segment off", e.Name(), n, len(text), want)
	}
}

// TestLongPieceMemoryBounded: a piece the pre-tokenizer cannot split (1 MB
// of one character, as a hostile client may send) is merged in 64 KiB
// segments, so one Count call stays within a few MB of scratch instead of
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
	// tiktoken merges runs of 'a' into 8-byte tokens; the segments are
	// cut at multiples of 8 here, so the count is still exact.
	if n != 1<<20/8 {
		t.Fatalf("count %d, want %d", n, 1<<20/8)
	}
}
