package metrics

import vm "github.com/VictoriaMetrics/metrics"

// LedgerCounters count the usage ledger's records: written, dropped (a
// full queue, or not written by shutdown) and failed batch writes. They
// implement ledger.Counters; each call is one atomic add.
type LedgerCounters struct {
	written, dropped, failed *vm.Counter
}

// Ledger returns the ledger's counters, registering them on first use.
func (m *Metrics) Ledger() *LedgerCounters {
	return &LedgerCounters{
		written: m.set.GetOrCreateCounter(`slipstream_ledger_records_total{result="written"}`),
		dropped: m.set.GetOrCreateCounter(`slipstream_ledger_records_total{result="dropped"}`),
		failed:  m.set.GetOrCreateCounter("slipstream_ledger_batch_failures_total"),
	}
}

// Written counts n records written.
func (c *LedgerCounters) Written(n int) { c.written.Add(n) }

// Dropped counts n records dropped.
func (c *LedgerCounters) Dropped(n int) { c.dropped.Add(n) }

// FailedBatch counts one batch the database refused (it is retried).
func (c *LedgerCounters) FailedBatch() { c.failed.Inc() }
