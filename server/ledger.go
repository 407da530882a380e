package server

import (
	"context"
	"fmt"

	"slipstream/server/config"
	"slipstream/server/ledger"
	"slipstream/server/metrics"
	"slipstream/server/price"
)

// The usage ledger (server/ledger) reads the finish stage's outcome: one
// record per finished exchange, queued by toLedger from record. The
// ledger lives for the process, across reloads (usage is bound at start).

// openLedger starts the usage ledger cfg asks for: off when usage.enabled
// is false, or when usage.database is not set and def (Options.DefaultLedger)
// is empty either. The database is opened lazily (ledger.OpenLazy): an
// idle server pays nothing for it (the idle RSS bound), an SQLite
// file that cannot be created stops the start (at the default place def,
// it only turns the ledger off, with a warning), and a database that
// does not answer only delays the writes (records wait in the queue,
// within its bound).
func (sh *shared) openLedger(cfg *config.Config, def string) error {
	u := &cfg.Usage
	db := u.Database
	if db == "" {
		db = def
	}
	if !u.On() || db == "" {
		return nil
	}
	d, err := ledger.OpenLazy(db)
	if err != nil && u.Database == "" {
		// The default place: a read-only home must not stop a server
		// whose configuration never asked for a ledger there.
		sh.log.Printf("warning: usage ledger off: %v (set usage.database to a writable path, or usage.enabled: false)", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot start the usage ledger (fix usage.database, or set usage.enabled: false): %w", err)
	}
	sh.ledger = ledger.Start(d, ledger.Options{
		QueueSize: u.QueueSize,
		BatchSize: u.BatchSize,
		Interval:  u.BatchInterval.D(),
		Retention: u.Retention.D(),
		Counters:  sh.metrics.Ledger(),
		Log:       sh.log,
	})
	sh.log.Printf("usage ledger: %s (retention %s; opened on the first record)", d, retentionText(u.Retention))
	return nil
}

func retentionText(r config.Retention) string {
	b, _ := r.MarshalText() // never fails
	return string(b)
}

// closeLedger writes what the ledger holds, within ctx, and closes it.
func (sh *shared) closeLedger(ctx context.Context) {
	if sh.ledger == nil {
		return
	}
	if err := sh.ledger.Close(ctx); err != nil {
		sh.log.Printf("usage ledger: cannot close %s: %v", sh.ledger.DB(), err)
	}
}

// Ledger returns the usage ledger, for its queries (ledger.DB), or nil
// when it is off.
func (s *Server) Ledger() *ledger.Ledger { return s.ledger }

// toLedger queues the exchange's record in the usage ledger, when it is
// on. It copies the model names and id out of the request's buffers into
// the record (on the stack) and costs one channel send: no allocation, no
// wait for the database. r is the request as record measured it.
func (x *exchange) toLedger(r *metrics.Request, c price.Cost) {
	l := x.s.ledger
	if l == nil {
		return
	}
	var e ledger.Record
	e.Start = x.start.UnixMicro()
	e.ID.Set(x.id[:])
	e.Key, e.Provider, e.ClientDialect = r.Key, r.Provider, r.Dialect
	if x.try.cred != nil {
		e.Credential = x.try.cred.Name // the configured name, never the secret
	}
	if p := x.target.Provider; p != nil {
		e.UpstreamDialect = p.Dialect.String()
	}
	e.Model.Set(x.model)
	e.UpstreamModel.Set(x.upModel)
	if x.fsink.out != nil {
		e.Transport = ledger.WebSocket
	}
	e.Status = int32(x.status)
	if err := x.failure(); err != nil {
		e.Cause = causeOf(err)
	}
	u := &x.usage
	e.Input, e.Output, e.CacheRead, e.CacheWrite, e.Reasoning = u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning
	e.Estimated = u.Estimated
	e.Latency, e.TTFT = r.Latency, r.TTFT
	e.BytesIn, e.BytesOut = r.BytesIn, r.BytesOut
	e.Guardrails.Set(x.guard.rules)
	if x.billable() { // else no cost: a token count, or refused before routing
		e.CostNanoUSD, e.Priced, e.APIEquivalent = c.Nanos(), c.Priced(), c.Kind == price.APIEquivalent
	}
	l.Add(&e)
}
