package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"
)

// Group is what Totals groups records by.
type Group string

// Groups.
const (
	ByKey      Group = "key"      // client key name
	ByModel    Group = "model"    // the model that served: the upstream model, else the client's
	ByProvider Group = "provider" // provider name
	ByDay      Group = "day"      // UTC day of arrival, YYYY-MM-DD
)

// ParseGroup parses key, model, provider or day.
func ParseGroup(s string) (Group, error) {
	switch g := Group(s); g {
	case ByKey, ByModel, ByProvider, ByDay:
		return g, nil
	}
	return "", fmt.Errorf("cannot group usage by %q (want key, model, provider or day)", s)
}

func (g Group) expr() string {
	switch g {
	case ByKey:
		return "key_name"
	case ByModel:
		return "CASE WHEN upstream_model <> '' THEN upstream_model ELSE model END"
	case ByProvider:
		return "provider"
	}
	return "ts / 86400000000" // the day number: integer division in both databases
}

// Total is the sum of the records of one group.
type Total struct {
	Group    string `json:"group"`    // the key, model, provider or day
	Requests int64  `json:"requests"` // records
	// Errors are the requests answered with a status of 400 or more, or
	// whose upstream failed after answering (a cause).
	Errors     int64 `json:"errors"`
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_tokens"`
	CacheWrite int64 `json:"cache_write_tokens"`
	Reasoning  int64 `json:"reasoning_tokens"`
	// CostNanoUSD sums the cost of the priced requests, in billionths of
	// a US dollar.
	CostNanoUSD int64 `json:"cost_nano_usd"`
	// Unpriced counts the requests that used tokens of a model with no
	// price: their cost is unknown, not zero.
	Unpriced int64 `json:"unpriced"`
}

// Totals sums the records of requests that arrived in [from, to), grouped
// by g, in ascending order of the group. A zero from or to leaves that
// end open. PostgreSQL sums in SQL over its rows; SQLite's pages are
// summed in Go (totalsPages) to the same results.
func (d *DB) Totals(ctx context.Context, g Group, from, to time.Time) (_ []Total, err error) {
	if _, err := ParseGroup(string(g)); err != nil {
		return nil, err
	}
	if err := d.ensureSchema(ctx); err != nil {
		return nil, err
	}
	lo, hi := bounds(from, to)
	if !d.postgres {
		return d.totalsPages(ctx, g, lo, hi)
	}
	q := "SELECT " + g.expr() + `, COUNT(*),
		SUM(CASE WHEN status >= 400 OR cause <> '' THEN 1 ELSE 0 END),
		CAST(SUM(input_tokens) AS BIGINT), CAST(SUM(output_tokens) AS BIGINT),
		CAST(SUM(cache_read_tokens) AS BIGINT), CAST(SUM(cache_write_tokens) AS BIGINT),
		CAST(SUM(reasoning_tokens) AS BIGINT),
		CAST(SUM(CASE WHEN priced THEN cost_nano_usd ELSE 0 END) AS BIGINT),
		SUM(CASE WHEN NOT priced AND input_tokens + output_tokens + cache_read_tokens + cache_write_tokens > 0 THEN 1 ELSE 0 END)
		FROM usage_records WHERE ts >= ` + d.param(1) + " AND ts < " + d.param(2) + " GROUP BY 1 ORDER BY 1"
	rows, err := d.db.QueryContext(ctx, q, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	defer closeRows(rows, &err)
	var ts []Total
	for rows.Next() {
		var t Total
		var group any
		if err := rows.Scan(&group, &t.Requests, &t.Errors, &t.Input, &t.Output, &t.CacheRead, &t.CacheWrite, &t.Reasoning, &t.CostNanoUSD, &t.Unpriced); err != nil {
			return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
		}
		t.Group = groupName(g, group)
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	return ts, nil
}

// groupName formats a group's value as Total.Group has it.
func groupName(g Group, v any) string {
	var s string
	switch v := v.(type) {
	case int64:
		s = strconv.FormatInt(v, 10)
		if g == ByDay {
			return time.UnixMicro(v * 86400000000).UTC().Format(time.DateOnly)
		}
	case []byte:
		s = string(v)
	case string:
		s = v
	}
	return s
}

// bounds are [from, to) in Unix microseconds, open ends made wide.
func bounds(from, to time.Time) (lo, hi int64) {
	lo, hi = -1<<62, 1<<62
	if !from.IsZero() {
		lo = from.UnixMicro()
	}
	if !to.IsZero() {
		hi = to.UnixMicro()
	}
	return lo, hi
}

func (d *DB) param(n int) string {
	if d.postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// Latest returns the records of the n requests that arrived last, newest
// first (of those that arrived at once, the last written first).
func (d *DB) Latest(ctx context.Context, n int) ([]Entry, error) {
	if err := d.ensureSchema(ctx); err != nil {
		return nil, err
	}
	if !d.postgres {
		return d.latestPages(ctx, n)
	}
	return d.entries(ctx, "SELECT "+columns+" FROM usage_records ORDER BY ts DESC, id DESC LIMIT "+d.param(1), n)
}

// Range returns the records of requests that arrived in [from, to), in
// order of arrival, at most limit of them (the first ones).
func (d *DB) Range(ctx context.Context, from, to time.Time, limit int) ([]Entry, error) {
	if err := d.ensureSchema(ctx); err != nil {
		return nil, err
	}
	lo, hi := bounds(from, to)
	if !d.postgres {
		return d.rangePages(ctx, lo, hi, limit)
	}
	q := "SELECT " + columns + " FROM usage_records WHERE ts >= " + d.param(1) + " AND ts < " + d.param(2) + " ORDER BY ts, id LIMIT " + d.param(3)
	return d.entries(ctx, q, lo, hi, limit)
}

func (d *DB) entries(ctx context.Context, q string, args ...any) (_ []Entry, err error) {
	if err := d.ensureSchema(ctx); err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	defer closeRows(rows, &err)
	var es []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	return es, nil
}

// scanEntry reads a row of columns, in their order, as an Entry.
func scanEntry(rows *sql.Rows) (Entry, error) {
	var e Entry
	var ts, lat, ttft int64
	err := rows.Scan(&ts, &e.ID, &e.Key, &e.Provider, &e.Credential, &e.Model, &e.UpstreamModel,
		&e.ClientDialect, &e.UpstreamDialect, &e.Transport, &e.Status, &e.Cause,
		&e.Input, &e.Output, &e.CacheRead, &e.CacheWrite, &e.Reasoning, &e.Estimated,
		&e.CostNanoUSD, &e.Priced, &e.APIEquivalent, &lat, &ttft, &e.BytesIn, &e.BytesOut, &e.Guardrails)
	e.Time = time.UnixMicro(ts).UTC()
	e.Latency, e.TTFT = time.Duration(lat)*time.Microsecond, time.Duration(ttft)*time.Microsecond
	return e, err
}

// Count returns how many records the ledger holds.
func (d *DB) Count(ctx context.Context) (int64, error) {
	if err := d.ensureSchema(ctx); err != nil {
		return 0, err
	}
	if !d.postgres {
		return d.countPages(ctx)
	}
	var n int64
	err := d.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM usage_records").Scan(&n)
	return n, err
}

// closeRows closes rows, reporting its error through err when there was
// none before.
func closeRows(rows *sql.Rows, err *error) {
	if cerr := rows.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}
