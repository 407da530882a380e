package metrics

import "sync"

var guardrailsOf sync.Map // *Metrics -> *counterTable[[2]string]

// Guardrail counts one guardrail match of rule (a configured rule name,
// never a matched value) with its action (redact, block or log). Once the
// pair was seen it costs one map lookup under a read lock and allocates
// nothing.
func (m *Metrics) Guardrail(rule, action string) {
	t := tableOf[[2]string](&guardrailsOf, m)
	t.counter(m.set, [2]string{rule, action}, func() string {
		return series("slipstream_guardrail_matches_total", "rule", rule, "action", action)
	}).Inc()
}
