//go:build !race

package price

import (
	"testing"

	"slipstream/codec"
)

// TestLookupAndCostAllocateNothing: pricing a request, as the server does
// for every request, allocates nothing: an exact name, a snapshot, a
// pattern and an unpriced name.
func TestLookupAndCostAllocateNothing(t *testing.T) {
	tab := NewTable([]Entry{{Model: "mine-*", Price: Price{Rates: Rates{Input: 1, Output: 2}}}})
	u := codec.Usage{Input: 1000, CacheRead: 200, CacheWrite: 100, Output: 50, Reasoning: 10, Known: true}
	var sink int64
	for _, m := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "mine-x", "nobody"} {
		n := testing.AllocsPerRun(100, func() {
			if p, ok := tab.Lookup(m); ok {
				sink += p.Of(&u) + p.Estimate(1000, 100)
			}
		})
		if n != 0 {
			t.Fatalf("%s: %v allocations per lookup and cost", m, n)
		}
	}
	_ = sink
}
