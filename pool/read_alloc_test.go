//go:build !race

package pool

import (
	"bytes"
	"testing"
)

// A pooled buffer that holds the body reads it without allocating.
func TestAppendCappedAllocs(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 10<<10)
	var r bytes.Reader
	b := Get(len(body) + 1)
	defer Put(b)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(body)
		var err error
		if b.B, err = AppendCapped(b.B[:0], &r, 1<<20); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read, want 0", allocs)
	}
}

// A pooled read that grows takes its larger buffers from the pool.
func TestReadCappedGrowsFromThePool(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1<<20)
	var r bytes.Reader
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(body)
		b := Get(0)
		if _, err := ReadCapped(b, &r, len(body)); err != nil {
			t.Fatal(err)
		}
		Put(b)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read, want 0", allocs)
	}
}
