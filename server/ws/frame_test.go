package ws

import (
	"testing"

	"slipstream/pool"
)

// TestStoreEviction: transcripts share one budget; the least recently
// stored go first, and one larger than the budget is not kept.
func TestStoreEviction(t *testing.T) {
	s := store{max: 3 * 8192}
	tr := func(n int, id string) transcript {
		x := transcript{body: pool.Get(n)}
		x.body.B = x.body.B[:n]
		x.inEnd = n
		x.idLen = copy(x.id[:], id)
		return x
	}
	a, b, c := &conn{}, &conn{}, &conn{}
	s.put(a, tr(8000, "ra"))
	s.put(b, tr(8000, "rb"))
	s.put(c, tr(8000, "rc"))
	if !a.state.matches([]byte("ra")) || s.Used() > s.max {
		t.Fatalf("three fitting transcripts: a kept %v, used %d", a.state.matches([]byte("ra")), s.Used())
	}
	s.put(a, tr(8000, "ra2")) // a is now the most recent
	s.put(b, tr(16000, "rb2"))
	if c.state.body != nil || !a.state.matches([]byte("ra2")) || !b.state.matches([]byte("rb2")) {
		t.Errorf("after growing b: a %v, b %v, c kept %v; want c evicted", a.state.matches([]byte("ra2")), b.state.matches([]byte("rb2")), c.state.body != nil)
	}
	if s.put(c, tr(40000, "big")) || c.state.body != nil {
		t.Errorf("a transcript over the whole budget was kept")
	}
	got := s.take(a)
	if !got.matches([]byte("ra2")) || a.state.body != nil {
		t.Errorf("take: %v", got.matches([]byte("ra2")))
	}
	got.release()
	s.drop(b)
	if s.Used() != 0 || s.head != nil || s.tail != nil {
		t.Errorf("after dropping all: used %d, list %p %p", s.Used(), s.head, s.tail)
	}
}
