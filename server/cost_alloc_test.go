//go:build !race

package server

import (
	"bytes"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestMoneyAddsNoAllocation: a request of a key with budget_usd and a
// token budget (priced at admission, its money reserved, settled to its
// cost, the cost counted in /metrics) allocates as many objects as the
// same request of a key with a token budget alone: pricing, money
// reservation and the cost metrics allocate nothing per request. The two
// servers are measured in alternating rounds, so that load from other
// tests weighs on both alike, and each keeps its least round: what the
// runtime allocates now and then (a pool refill, a timer) is a fraction
// of an allocation per request, and one added per request is a whole one.
func TestMoneyAddsNoAllocation(t *testing.T) {
	up := rawUpstream(t, httpReply("application/json", chatReply))
	type client struct {
		rc  *rawClient
		req []byte
	}
	open := func(policy string) client {
		yml := "keys:\n  - {name: ci, key: sk-client, " + policy + "}\n" +
			"providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\n" +
			"prices:\n  - {model: \"gpt-4.1\", input: 2, output: 8}\ntimeouts: {keepalive: 0s}\n"
		base, _ := startServer(t, yml, up)
		c := client{dialRaw(t, base), rawRequest("/v1/chat/completions", chatBody(4000, false))}
		c.req = bytes.Replace(c.req, []byte("Host: localhost\r\n"), []byte("Host: localhost\r\nAuthorization: Bearer sk-client\r\n"), 1)
		for i := 0; i < 5; i++ {
			if status, b := c.rc.do(t, c.req); status != 200 {
				t.Fatalf("%s: status %d %s", policy, status, b)
			}
		}
		return c
	}
	tokens := open("budget: 1000000000")
	money := open("budget: 1000000000, budget_usd: 1000000")
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 32
	perRequest := func(c client) float64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := 0; i < n; i++ {
			c.rc.do(t, c.req)
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / n
	}
	leastTokens, leastMoney := math.Inf(1), math.Inf(1)
	for round := 0; round < 8; round++ {
		leastTokens = min(leastTokens, perRequest(tokens))
		leastMoney = min(leastMoney, perRequest(money))
	}
	t.Logf("allocations per request: %.2f with a token budget, %.2f with budget_usd too", leastTokens, leastMoney)
	if leastMoney-leastTokens >= 0.5 {
		t.Fatalf("budget_usd adds %.2f allocations per request, want 0", leastMoney-leastTokens)
	}
}
