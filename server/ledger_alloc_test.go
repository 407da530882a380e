//go:build !race

package server

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestLedgerRequestAllocs: with the ledger on, a request allocates no more
// than with it off: the request path pays only the enqueue.
func TestLedgerRequestAllocs(t *testing.T) {
	up := rawUpstream(t, httpReply("application/json", chatReply))
	yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	req := rawRequest("/v1/chat/completions", chatBody(4<<10, false))
	off, _ := startServer(t, yml, up)
	// A long batch interval and a large batch: the writer does not run
	// while allocations are counted (its allocations are not the request's).
	on, s := startServer(t, yml+"usage: {database: \""+filepath.Join(t.TempDir(), "usage.db")+"\", batch_interval: 1h, batch_size: 4096, queue_size: 4096}\n", up)
	a, b := mallocsPerRequest(t, off, req), mallocsPerRequest(t, on, req)
	t.Logf("allocations per request: %.2f with the ledger off, %.2f on", a, b)
	if b-a >= 0.5 {
		t.Fatalf("the ledger costs %.2f allocations per request, want 0", b-a)
	}
	if st := s.Ledger().Stats(); st.Added == 0 || st.Dropped != 0 {
		t.Fatalf("ledger: %+v", st)
	}
}

// mallocsPerRequest is the heap allocations one request took, averaged
// over the quietest of a few rounds, once warm. The process's background
// goroutines add allocations to a round and pooled objects now and then
// save one, so a round is long enough that either moves the average by
// well under the one allocation a comparison is looking for.
func mallocsPerRequest(t *testing.T, base string, req []byte) float64 {
	rc := dialRaw(t, base)
	for range 5 {
		if status, got := rc.do(t, req); status != 200 {
			t.Fatalf("status %d: %s", status, clipT(got))
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 64
	least := ^uint64(0)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			rc.do(t, req)
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.Mallocs-before.Mallocs)
	}
	return float64(least) / n
}
