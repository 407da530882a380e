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
	t.Logf("allocations per request: %d with the ledger off, %d on", a, b)
	if b > a {
		t.Fatalf("the ledger costs %d allocations per request, want 0", b-a)
	}
	if st := s.Ledger().Stats(); st.Added == 0 || st.Dropped != 0 {
		t.Fatalf("ledger: %+v", st)
	}
}

// mallocsPerRequest is the fewest heap allocations one request took, over
// a few rounds, once warm.
func mallocsPerRequest(t *testing.T, base string, req []byte) uint64 {
	rc := dialRaw(t, base)
	for range 5 {
		if status, got := rc.do(t, req); status != 200 {
			t.Fatalf("status %d: %s", status, clipT(got))
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 8
	least := ^uint64(0)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			rc.do(t, req)
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.Mallocs-before.Mallocs)/n)
	}
	return least
}
