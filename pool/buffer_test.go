package pool

import "testing"

func TestClassOf(t *testing.T) {
	f := func(n, want int) {
		t.Helper()
		if got := classOf(n); got != want {
			t.Fatalf("classOf(%d) = %d, want %d", n, got, want)
		}
	}
	f(0, 0)
	f(4096, 0)
	f(4097, 1)
	f(16384, 1)
	f(16385, 2)
	f(1<<24, 6)
	f(1<<24+1, 7)
}

func TestGetCapacity(t *testing.T) {
	for _, n := range []int{0, 1, 4096, 5000, 70000, 1 << 20, 3 << 20, 1 << 24, 1<<24 + 5} {
		b := Get(n)
		if cap(b.B) < n || len(b.B) != 0 {
			t.Fatalf("Get(%d): len %d cap %d", n, len(b.B), cap(b.B))
		}
		b.B = append(b.B, "x"...)
		Put(b)
	}
}

func TestPutDropsOversized(t *testing.T) {
	b := &Buffer{B: make([]byte, 0, MaxPooled+1)}
	Put(b) // must not panic, must not be pooled
	for i := 0; i < 4; i++ {
		if g := Get(MaxPooled); cap(g.B) > MaxPooled {
			t.Fatalf("oversized buffer came back from the pool")
		}
	}
}

func TestPutKeepsClassInvariant(t *testing.T) {
	// A buffer grown by append to an odd capacity goes to the class below it,
	// so Get never hands out less than the class capacity.
	b := &Buffer{B: make([]byte, 0, 20000)}
	Put(b)
	g := Get(16384)
	if cap(g.B) < 16384 {
		t.Fatalf("cap %d < 16384", cap(g.B))
	}
}

func TestB2SS2B(t *testing.T) {
	b := []byte("hello")
	if B2S(b) != "hello" {
		t.Fatal("B2S")
	}
	if string(S2B("world")) != "world" {
		t.Fatal("S2B")
	}
	if B2S(nil) != "" || len(S2B("")) != 0 {
		t.Fatal("empty")
	}
}
