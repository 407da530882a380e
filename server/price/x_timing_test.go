package price

import (
	"testing"

	"slipstream/codec"
)

// BenchmarkLookupAndCost is what pricing costs a request: the lookup of
// the served model (an exact name, a dated snapshot, a pattern of the
// configuration) and the cost of its usage; the baseline is the cost
// alone.
func BenchmarkLookupAndCost(b *testing.B) {
	tab := NewTable([]Entry{{Model: "team-*", Price: Price{Rates: Rates{Input: 1, Output: 2}}}})
	u := codec.Usage{Input: 12000, CacheRead: 8000, CacheWrite: 1000, Output: 900, Reasoning: 300, Known: true}
	for _, m := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "team-x"} {
		b.Run(m, func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for i := 0; i < b.N; i++ {
				if p, ok := tab.Lookup(m); ok {
					sink += p.Of(&u)
				}
			}
			_ = sink
		})
	}
	b.Run("baseline_cost_only", func(b *testing.B) {
		b.ReportAllocs()
		p, _ := tab.Lookup("claude-sonnet-4-5")
		var sink int64
		for i := 0; i < b.N; i++ {
			sink += p.Of(&u)
		}
		_ = sink
	})
}
