//go:build !race

package failover

import (
	"testing"
)

// TestPlanAllocations: a request's whole failover (start, three failed
// attempts along credentials, providers and a fallback, the final
// answer) allocates nothing once the plan's alternatives have their
// capacity.
func TestPlanAllocations(t *testing.T) {
	e := newEnv(t, tableConfig)
	req := e.request("claude-x")
	run := func() {
		e.plan.Reset()
		e.plan.Start(req, e.now, int64(e.cfg.Failover.Deadline.D()))
		for n := 1; ; n++ {
			v := Classify(&e.cfg.Failover, Outcome{Status: 503})
			if _, retry := e.plan.Fail(v, e.now, n, 10); !retry || !e.plan.Next(e.now) {
				break
			}
			e.plan.Commit()
		}
		e.now += int64(e.cfg.Failover.ServerError.D()) // every rest is over
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("a failover allocates %v times, want 0", n)
	}
}
