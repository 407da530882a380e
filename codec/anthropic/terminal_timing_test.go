package anthropic

import "testing"

// BenchmarkTailObserve is what the same-dialect relay spends per
// Anthropic stream on the terminal event and usage.
func BenchmarkTailObserve(b *testing.B) {
	evs := make([][2][]byte, len(streamEvents))
	for i, ev := range streamEvents {
		evs[i] = [2][]byte{[]byte(ev[0]), []byte(ev[1])}
	}
	b.ReportAllocs()
	var tl Tail
	for i := 0; i < b.N; i++ {
		tl.Reset()
		for _, ev := range evs {
			tl.Observe(ev[0], ev[1])
		}
	}
}
