package server

import (
	"cmp"
	"context"
	"slices"
	"time"

	"slipstream/server/admin"
	"slipstream/server/ledger"
)

// The management API's view of the usage ledger: its totals and latest
// requests in the API's shapes.

// ledgerView is the usage ledger as the management API reads it, nil
// while no ledger is enabled (its routes then answer 503).
func (s *Server) ledgerView() admin.Ledger {
	if s.ledger == nil {
		return nil
	}
	return ledgerReader{s.ledger.DB()}
}

// spentToday is what today's (UTC) requests cost across every replica
// writing the ledger, nil without a ledger or when it cannot be read.
func (s *Server) spentToday() *float64 {
	if s.ledger == nil {
		return nil
	}
	day := s.now().UTC().Truncate(24 * time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ts, err := s.ledger.DB().Totals(ctx, ledger.ByDay, day, day.Add(24*time.Hour))
	if err != nil {
		return nil
	}
	var nanos int64
	for _, t := range ts {
		nanos += t.CostNanoUSD
	}
	usd := float64(nanos) / 1e9
	return &usd
}

// ledgerReader implements admin.Ledger over the ledger's database.
type ledgerReader struct{ db *ledger.DB }

// Usage implements admin.Ledger: groups of names with the largest cost
// first (then the most requests), days in date order.
func (r ledgerReader) Usage(ctx context.Context, q admin.UsageQuery) ([]admin.UsageRow, error) {
	g, err := ledger.ParseGroup(q.By)
	if err != nil {
		return nil, err
	}
	ts, err := r.db.Totals(ctx, g, q.From, q.To)
	if err != nil {
		return nil, err
	}
	rows := make([]admin.UsageRow, len(ts))
	for i, t := range ts {
		rows[i] = admin.UsageRow{Group: t.Group, Requests: t.Requests, Errors: t.Errors,
			InputTokens: t.Input, OutputTokens: t.Output, CacheReadTokens: t.CacheRead,
			CacheWriteTokens: t.CacheWrite, ReasoningTokens: t.Reasoning,
			CostUSD: float64(t.CostNanoUSD) / 1e9, Unpriced: t.Unpriced}
	}
	if g != ledger.ByDay {
		slices.SortStableFunc(rows, func(a, b admin.UsageRow) int {
			return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Requests, a.Requests))
		})
	}
	return rows, nil
}

// Requests implements admin.Ledger.
func (r ledgerReader) Requests(ctx context.Context, limit int) ([]admin.RequestRow, error) {
	es, err := r.db.Latest(ctx, limit)
	if err != nil {
		return nil, err
	}
	rows := make([]admin.RequestRow, len(es))
	for i := range es {
		e := &es[i]
		rows[i] = admin.RequestRow{Time: e.Time, ID: e.ID, Key: e.Key, Provider: e.Provider,
			Credential: e.Credential, Model: e.Model, UpstreamModel: e.UpstreamModel,
			Dialect: e.ClientDialect, UpstreamDialect: e.UpstreamDialect, Transport: e.Transport,
			Status: e.Status, Cause: e.Cause, InputTokens: e.Input, OutputTokens: e.Output,
			CacheReadTokens: e.CacheRead, CacheWriteTokens: e.CacheWrite, ReasoningTokens: e.Reasoning,
			Estimated: e.Estimated, LatencyMS: ms(e.Latency), TTFTMS: ms(e.TTFT),
			BytesIn: e.BytesIn, BytesOut: e.BytesOut, Guardrails: e.Guardrails}
		if e.Priced {
			usd := float64(e.CostNanoUSD) / 1e9
			rows[i].CostUSD = &usd
		}
	}
	return rows, nil
}
