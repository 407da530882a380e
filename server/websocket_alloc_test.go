//go:build !race

package server

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestWSEventAllocs: once a WebSocket response streams, relaying one more
// event allocates nothing: two turns that differ only in their number of
// events cost the same number of allocations.
func TestWSEventAllocs(t *testing.T) {
	frame := asFrame(responsesBody(4000), "")
	mallocs := func(events int) uint64 {
		base := wsBudgetServer(t, responsesStream(events, "resp_1"))
		w := dialRawWS(t, base)
		for i := 0; i < 3; i++ {
			w.turn(t, frame)
		}
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const n = 4
		for i := 0; i < n; i++ {
			if got, last := w.turn(t, frame); got != events+4 {
				t.Fatalf("%d frames, want %d; last %s", got, events+4, clipT(last))
			}
		}
		runtime.ReadMemStats(&after)
		return (after.Mallocs - before.Mallocs) / n
	}
	short, long := mallocs(200), mallocs(2200)
	perEvent := float64(int64(long)-int64(short)) / 2000
	t.Logf("allocations per WebSocket turn: %d (200 events), %d (2200 events): %.3f per event", short, long, perEvent)
	if perEvent > 0.01 {
		t.Fatalf("%.3f allocations per relayed event, want 0", perEvent)
	}
}

// TestWSTurnHeapBudget: a turn over the WebSocket costs no more heap than
// the same turn over HTTP+SSE plus the transcript the connection keeps
// (the request body it sent upstream and the response's output items).
// Measured in steady state with the GC off, per turn, for full-input
// frames and for chained frames (a full frame, then one chaining on it
// with no new items, whose HTTP equivalent is the whole transcript again).
func TestWSTurnHeapBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("sends large bodies")
	}
	for _, size := range []int{64 << 10, 1 << 20} {
		body := responsesBody(size)
		base := wsBudgetServer(t, responsesStream(20, "resp_1"))
		httpReq := rawRequest("/v1/responses", body)
		httpPerTurn := allocPerRequest(t, base, httpReq)

		w := dialRawWS(t, base)
		full := asFrame(body, "")
		chained := asFrame([]byte(`{"model":"gpt-t","stream":true,"store":false,"tool_choice":"auto","input":[]}`), "resp_1")
		pair := func() {
			if _, last := w.turn(t, full); !bytes.Contains(last, []byte("response.completed")) {
				t.Fatalf("full frame: %s", clipT(last))
			}
			if _, last := w.turn(t, chained); !bytes.Contains(last, []byte("response.completed")) {
				t.Fatalf("chained frame: %s", clipT(last))
			}
		}
		for i := 0; i < 3; i++ {
			pair()
		}
		wsPerTurn := func() uint64 {
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			least := ^uint64(0)
			for round := 0; round < 3; round++ {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				const n = 2
				for i := 0; i < n; i++ {
					pair()
				}
				runtime.ReadMemStats(&after)
				least = min(least, (after.TotalAlloc-before.TotalAlloc)/(2*n))
			}
			return least
		}()
		transcript := uint64(len(body)) + 4<<10
		budget := httpPerTurn + transcript
		t.Logf("%d-byte body: %d bytes of heap per turn over HTTP+SSE, %d over the WebSocket (budget %d = HTTP + transcript %d)",
			len(body), httpPerTurn, wsPerTurn, budget, transcript)
		if wsPerTurn > budget {
			t.Errorf("%d-byte body: a WebSocket turn costs %d bytes of heap, over HTTP's %d plus the transcript's %d", len(body), wsPerTurn, httpPerTurn, transcript)
		}
	}
}
