package metrics

import (
	"sync"

	vm "github.com/VictoriaMetrics/metrics"
)

// guardrailSeries are the slipstream_guardrail_matches_total series of one
// Metrics, by rule and action.
type guardrailSeries struct {
	mu sync.RWMutex
	c  map[[2]string]*vm.Counter
}

var guardrailsOf sync.Map // *Metrics -> *guardrailSeries

// Guardrail counts one guardrail match of rule (a configured rule name,
// never a matched value) with its action (redact, block or log). Once the
// pair was seen it costs one map lookup under a read lock and allocates
// nothing.
func (m *Metrics) Guardrail(rule, action string) {
	v, _ := guardrailsOf.LoadOrStore(m, &guardrailSeries{c: map[[2]string]*vm.Counter{}})
	gs := v.(*guardrailSeries)
	k := [2]string{rule, action}
	gs.mu.RLock()
	c := gs.c[k]
	gs.mu.RUnlock()
	if c == nil {
		gs.mu.Lock()
		if c = gs.c[k]; c == nil {
			c = m.set.GetOrCreateCounter(series("slipstream_guardrail_matches_total", "rule", rule, "action", action))
			gs.c[k] = c
		}
		gs.mu.Unlock()
	}
	c.Inc()
}
