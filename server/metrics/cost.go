package metrics

import (
	vm "github.com/VictoriaMetrics/metrics"
)

// CostLabels identify a cost series. Every string must outlive the
// Metrics (a configuration string or a ModelLabels label), not be a view
// into a request.
type CostLabels struct {
	Provider string // provider name
	Model    string // a ModelLabels label of the model that served the request
	Key      string // client key name, "" for none
}

// costSeries are the series of one CostLabels.
type costSeries struct {
	api, equivalent *vm.FloatCounter // slipstream_cost_usd_total by kind
	unpriced        *vm.Counter      // slipstream_unpriced_requests_total
}

// Cost records the cost of one finished request: pico picodollars
// (USD 1e-12) at the API's prices, or at their equivalent for a
// subscription account's answer (equivalent), or, when priced is false,
// one request of a model without a price, whose cost is unknown. Once its
// labels were seen it costs one map lookup under a read lock and
// allocates nothing.
func (m *Metrics) Cost(l *CostLabels, pico int64, priced, equivalent bool) {
	m.mu.RLock()
	cs := m.costs[*l]
	m.mu.RUnlock()
	if cs == nil {
		cs = m.newCost(l)
	}
	switch {
	case !priced:
		cs.unpriced.Inc()
	case equivalent:
		cs.equivalent.Add(float64(pico) / 1e12)
	default:
		cs.api.Add(float64(pico) / 1e12)
	}
}

// newCost builds the series of l (once per label set).
func (m *Metrics) newCost(l *CostLabels) *costSeries {
	kv := func(kind string) []string {
		return []string{"provider", l.Provider, "model", l.Model, "key", l.Key, "kind", kind}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.costs == nil {
		m.costs = map[CostLabels]*costSeries{}
	}
	if cs := m.costs[*l]; cs != nil {
		return cs
	}
	cs := &costSeries{
		api:        m.set.GetOrCreateFloatCounter(series("slipstream_cost_usd_total", kv("api")...)),
		equivalent: m.set.GetOrCreateFloatCounter(series("slipstream_cost_usd_total", kv("api_equivalent")...)),
		unpriced:   m.set.GetOrCreateCounter(series("slipstream_unpriced_requests_total", "provider", l.Provider, "model", l.Model, "key", l.Key)),
	}
	m.costs[*l] = cs
	return cs
}
