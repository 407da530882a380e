package server

import (
	"strings"
	"testing"
	"time"

	"slipstream/internal/redistest"
	"slipstream/internal/testkit"
)

// TestReplicasShareRPM: two slipstream servers sharing one real
// redis-server enforce one rpm limit together: alice's rpm 5 lets five
// requests through, spread over both, and the sixth is refused by either.
// With redis-server stopped mid-test both keep serving (per-replica limits
// then, never refused for the outage).
func TestReplicasShareRPM(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	yml := `keys:
  - {name: alice, key: sk-alice-0123456789, rpm: 5}
  - {name: bob, key: sk-bob-0123456789}
providers:
  - {name: m, kind: mock, models: ["mock*"]}
redis: {url: "` + rs.URL() + `", prefix: replicas}
`
	var logsA, logsB testkit.Buffer
	a := serveConfig(t, parseConfig(t, yml, ""), &logsA)
	b := serveConfig(t, parseConfig(t, yml, ""), &logsB)
	for _, l := range []*testkit.Buffer{&logsA, &logsB} {
		l.WaitFor(t, 5*time.Second, "redis: connected")
	}
	body := `{"model":"mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	alice := []string{"Authorization", "Bearer sk-alice-0123456789"}
	bob := []string{"Authorization", "Bearer sk-bob-0123456789"}
	for i := 0; i < 5; i++ {
		base := a
		if i%2 == 1 {
			base = b
		}
		if status, _, got := post(t, base+"/v1/messages", body, alice...); status != 200 {
			t.Fatalf("request %d: %d %s", i+1, status, got)
		}
	}
	for _, base := range []string{a, b} {
		status, h, got := post(t, base+"/v1/messages", body, alice...)
		if status != 429 || h.Get("Retry-After") == "" {
			t.Fatalf("6th request of the minute: %d (retry-after %q) %s", status, h.Get("Retry-After"), got)
		}
	}

	rs.Stop()
	for i := 0; i < 6; i++ {
		for _, base := range []string{a, b} {
			if status, _, got := post(t, base+"/v1/messages", body, bob...); status != 200 {
				t.Fatalf("with redis stopped: %d %s", status, got)
			}
		}
	}
	// alice is limited per replica now: a saw three of her requests, so
	// it still has two.
	for i := 0; i < 2; i++ {
		if status, _, got := post(t, a+"/v1/messages", body, alice...); status != 200 {
			t.Fatalf("alice with redis stopped, request %d: %d %s", i+1, status, got)
		}
	}
	if !strings.Contains(logsA.String()+logsB.String(), "warning: redis is unreachable") {
		t.Fatalf("no warning about the outage:\nA:\n%s\nB:\n%s", logsA.String(), logsB.String())
	}
}
