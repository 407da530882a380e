package tokenize

import (
	"bytes"
	"runtime"
	"testing"
)

// TestLongPieceMemoryBounded: a piece the pre-tokenizer cannot split (1 MB
// of one character) is merged in 64 KiB segments, so one Count call stays
// within a few MB of scratch instead of ~70 bytes per input byte.
func TestLongPieceMemoryBounded(t *testing.T) {
	e := O200k()
	text := bytes.Repeat([]byte("a"), 1<<20)
	e.Count(text[:1024]) // build the table outside the measurement
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := e.Count(text)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("counting 1 MB of one character allocated %d bytes, want <= 16 MiB", alloc)
	}
	// Still about tiktoken's count: it merges runs of 'a' into 8-byte or
	// 16-byte tokens.
	if n < 1<<20/64 || n > 1<<20/4 {
		t.Fatalf("count %d is not plausible for 1 MB of 'a'", n)
	}
}
