//go:build !race

package server

import (
	"runtime"
	"runtime/debug"
	"testing"

	"slipstream/server/provider"
)

// TestLiveRegistryAllocs: registering a request in the live registry,
// storing its progress and taking it out allocate nothing in steady
// state, with or without a client key, while no one follows the feed.
func TestLiveRegistryAllocs(t *testing.T) {
	cfg := parseConfig(t, adminConfig, "http://127.0.0.1:9")
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := newExchange()
	x.s, x.model = s, []byte("claude-x")
	p := s.reg.Provider("anth")
	x.target = provider.Target{Provider: p}
	x.try.cred = &p.Credentials()[0]
	key := s.keys.Find([]byte(adminClientKey))
	run := func() {
		x.id = s.ids.next()
		x.liveAdd()
		x.bytesOut += 100
		x.liveProgress()
		x.liveRemove()
	}
	for _, k := range []*clientKey{nil, key} {
		x.key = k
		for range 2 * liveShards {
			run() // first use: every shard's map, the key's totals
		}
		// AllocsPerRun rounds down: count the whole run's mallocs.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 1000 {
			run()
		}
		runtime.ReadMemStats(&after)
		if n := after.Mallocs - before.Mallocs; n > 2 {
			t.Fatalf("key %v: %d allocations in 1000 requests, want 0", k != nil, n)
		}
	}
	if got := s.live.finished.Load(); got < 2000 {
		t.Fatalf("counted %d requests", got)
	}
}

// TestLiveShardsSpread: consecutive request ids use every shard, and any
// byte ending a hostile id names a shard.
func TestLiveShardsSpread(t *testing.T) {
	seen := map[uint8]bool{}
	for _, c := range []byte("0123456789abcdef") {
		seen[shardOf(c)] = true
	}
	if len(seen) != liveShards {
		t.Fatalf("the 16 hex digits use %d shards", len(seen))
	}
	for c := 0; c < 256; c++ {
		if shardOf(byte(c)) >= liveShards {
			t.Fatalf("byte %d names shard %d", c, shardOf(byte(c)))
		}
	}
}
