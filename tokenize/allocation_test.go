//go:build !race

package tokenize

import (
	"bytes"
	"testing"
)

// TestAllocations: Count, CountString and AppendTokens (into a dst with
// capacity) allocate nothing once the table is built, also on a piece
// merged in joined windows. Budget: 0.
func TestAllocations(t *testing.T) {
	text := mixText(t, 64<<10)
	text = append(text, bytes.Repeat([]byte("ab"), 100<<10)...)
	for _, e := range []*Encoding{O200k(), Cl100k()} {
		dst := e.AppendTokens(nil, text)
		s := string(text)
		f := func(name string, fn func()) {
			t.Helper()
			if n := testing.AllocsPerRun(20, fn); n != 0 {
				t.Fatalf("%s %s: %v allocs per run, want 0", e.Name(), name, n)
			}
		}
		f("Count", func() { e.Count(text) })
		f("CountString", func() { e.CountString(s) })
		f("AppendTokens", func() { dst = e.AppendTokens(dst[:0], text) })
	}
}
