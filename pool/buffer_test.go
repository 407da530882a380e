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
	f(4608, 1)
	f(4609, 2)
	f(8192, 8)
	f(8193, 9)
	f(1<<24, numClasses-1)
	f(1<<24+1, numClasses)
}

func TestClassesRoundTrip(t *testing.T) {
	for c := 0; c < numClasses; c++ {
		n := classCap(c)
		if classOf(n) != c || floorClass(n) != c {
			t.Fatalf("class %d: cap %d, classOf %d, floorClass %d", c, n, classOf(n), floorClass(n))
		}
		if c > 0 && (classOf(n-1) != c || floorClass(n-1) != c-1) {
			t.Fatalf("class %d: cap-1 misplaced", c)
		}
		if c > 0 && float64(n)/float64(classCap(c-1)) > 1.126 {
			t.Fatalf("class %d wastes more than 12.5%%", c)
		}
	}
}

func TestPooledBufferComesBack(t *testing.T) {
	// sync.Pool may drop a Put (always possible, and often under -race),
	// so the test asks for a reuse within a few tries.
	for i := 0; i < 20; i++ {
		b := Get(2_159_693)
		p := &b.B[:1][0]
		Put(b)
		if g := Get(2_159_000); &g.B[:1][0] == p {
			return
		}
	}
	t.Fatal("a buffer of the same class was never reused")
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
