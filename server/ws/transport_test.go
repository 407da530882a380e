package ws

import "testing"

// TestAddHoldsTheLimit: upgrades answered together may all pass the check
// at the 101; the connection whose socket arrives past
// limits.ws_connections is closed with 1013 instead of counted, and a
// place freed is taken again.
func TestAddHoldsTheLimit(t *testing.T) {
	tr := New(Options{MaxConns: 1})
	a, b := &conn{t: tr}, &conn{t: tr}
	if r := tr.add(a); r != nil {
		t.Fatalf("first connection refused: %v", r.text)
	}
	if r := tr.add(b); r != closeTooMany {
		t.Fatalf("second connection past the limit: %v, want closeTooMany", r)
	}
	if tr.Conns() != 1 || tr.Stats().Refused != 1 {
		t.Fatalf("%d open, %d refused; want 1 and 1", tr.Conns(), tr.Stats().Refused)
	}
	tr.remove(a)
	if r := tr.add(b); r != nil {
		t.Fatalf("a freed place refused: %v", r.text)
	}
	tr.remove(b)
}
