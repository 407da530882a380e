package tokenize

import (
	"bytes"
	"math/rand"
	"runtime"
	"testing"
)

// TestLongPieceExact: pieces over 64 KiB, which the pre-tokenizer cannot
// split, get tiktoken's ids. (Until 2026-12 they were merged in 64 KiB
// segments and could differ by a token per segment.) The oracle is
// quadratic, so this takes seconds and is skipped with -short.
func TestLongPieceExact(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: the tiktoken-go oracle takes seconds per long piece")
	}
	rng := rand.New(rand.NewSource(1))
	dna := make([]byte, 66<<10+7)
	for i := range dna {
		dna[i] = "acgt"[rng.Intn(4)]
	}
	f := func(text []byte) {
		t.Helper()
		checkExact(t, O200k(), text)
		checkExact(t, Cl100k(), text)
	}
	// Merged in 64 KiB segments, these two were a token over.
	f(append([]byte("x"), bytes.Repeat([]byte("a"), 64<<10+1001)...))
	f(bytes.Repeat([]byte("abc"), 22000))
	f(dna)
}

// TestLongPieceMemory: merging a piece is linear in time and scratch: 1 MB
// of one character, one piece, takes at most 48 bytes of scratch per byte
// (measured: 44), and nothing that large stays pooled.
func TestLongPieceMemory(t *testing.T) {
	e := O200k()
	text := bytes.Repeat([]byte("a"), 1<<20)
	e.Count(text[:1024]) // build the table outside the measurement
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := e.Count(text)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 48<<20 {
		t.Fatalf("counting 1 MB of one character allocated %d bytes, want <= 48 MiB", alloc)
	}
	// tiktoken merges runs of 'a' into 8-byte tokens.
	if n != 1<<20/8 {
		t.Fatalf("count %d, want %d", n, 1<<20/8)
	}
}
