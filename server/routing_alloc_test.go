//go:build !race

package server

import (
	"testing"
	"time"
)

// TestRoutingDecisionAllocs: the routing decision (key check, limit
// check, credential pick, with affinity) allocates nothing. Budget: 0.
func TestRoutingDecisionAllocs(t *testing.T) {
	s := routingServer(t)
	key := []byte("sk-client-a")
	now := time.Now()
	n := testing.AllocsPerRun(1000, func() {
		if routeOnce(s, key, "claude-sonnet-5", 42, now) == nil {
			t.Fatal("no credential")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocs per routing decision, want 0", n)
	}
}
