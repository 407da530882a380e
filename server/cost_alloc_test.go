//go:build !race

package server

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestMoneyAddsNoAllocation: a request of a key with budget_usd and a
// token budget (priced at admission, its money reserved, settled to its
// cost, the cost counted in /metrics) allocates exactly as many objects as
// the same request of a key with a token budget alone: pricing, money
// reservation and the cost metrics allocate nothing per request.
func TestMoneyAddsNoAllocation(t *testing.T) {
	up := rawUpstream(t, httpReply("application/json", chatReply))
	mallocs := func(policy string) uint64 {
		yml := "keys:\n  - {name: ci, key: sk-client, " + policy + "}\n" +
			"providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\n" +
			"prices:\n  - {model: \"gpt-4.1\", input: 2, output: 8}\ntimeouts: {keepalive: 0s}\n"
		base, _ := startServer(t, yml, up)
		rc := dialRaw(t, base)
		req := rawRequest("/v1/chat/completions", chatBody(4000, false))
		req = bytes.Replace(req, []byte("Host: localhost\r\n"), []byte("Host: localhost\r\nAuthorization: Bearer sk-client\r\n"), 1)
		for i := 0; i < 5; i++ {
			if status, b := rc.do(t, req); status != 200 {
				t.Fatalf("%s: status %d %s", policy, status, b)
			}
		}
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		least := ^uint64(0)
		for round := 0; round < 5; round++ {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const n = 32
			for i := 0; i < n; i++ {
				rc.do(t, req)
			}
			runtime.ReadMemStats(&after)
			least = min(least, (after.Mallocs-before.Mallocs)/n)
		}
		return least
	}
	tokens := mallocs("budget: 1000000000")
	money := mallocs("budget: 1000000000, budget_usd: 1000000")
	t.Logf("allocations per request: %d with a token budget, %d with budget_usd too", tokens, money)
	if money > tokens {
		t.Fatalf("budget_usd adds %d allocations per request, want 0", money-tokens)
	}
}
