package ledger

import (
	"context"
	"database/sql"
	"math/bits"
	"strings"
)

// columns are usage_records' columns as Insert writes them, in the order
// of recordArgs and of a page's values (page.go).
const columns = "ts, request_id, key_name, provider, credential, model, upstream_model, client_dialect, upstream_dialect, transport, " +
	"status, cause, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, " +
	"cost_nano_usd, priced, api_equivalent, latency_us, ttft_us, bytes_in, bytes_out, guardrails"

const numColumns = 26

// maxChunkLog bounds one INSERT to 1<<maxChunkLog rows (3,328 bound
// parameters), under both databases' limits.
const maxChunkLog = 7

// Insert writes rs in one transaction: all of them or none. It applies
// the migrations first when Open could not. SQLite's records go into
// pages (insertPages); PostgreSQL's rows in chunks of 128, 64, ... 1
// rows, each chunk size an INSERT prepared once per DB: parsing a
// statement of thousands of parameters for every batch cost more than
// writing its rows.
func (d *DB) Insert(ctx context.Context, rs []Record) error {
	if len(rs) == 0 {
		return nil
	}
	if err := d.ensureSchema(ctx); err != nil {
		return err
	}
	if !d.postgres {
		return d.insertPages(ctx, rs)
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	args := make([]any, 0, min(len(rs), 1<<maxChunkLog)*numColumns)
	for len(rs) > 0 {
		k := min(bits.Len(uint(len(rs)))-1, maxChunkLog)
		n := 1 << k
		st, err := d.insertStmt(ctx, k)
		if err != nil {
			return err
		}
		args = args[:0]
		for i := range rs[:n] {
			args = recordArgs(args, &rs[i])
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return tx.Commit()
}

// insertStmt is the prepared INSERT of 1<<k rows.
func (d *DB) insertStmt(ctx context.Context, k int) (*sql.Stmt, error) {
	d.stmtMu.Lock()
	defer d.stmtMu.Unlock()
	if d.stmts[k] == nil {
		st, err := d.db.PrepareContext(ctx, d.insertSQL(1<<k))
		if err != nil {
			return nil, err
		}
		d.stmts[k] = st
	}
	return d.stmts[k], nil
}

// insertSQL is an INSERT of n rows.
func (d *DB) insertSQL(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO usage_records (" + columns + ") VALUES ")
	p := 1
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range numColumns {
			if j > 0 {
				b.WriteByte(',')
			}
			d.ph(&b, p)
			p++
		}
		b.WriteByte(')')
	}
	return b.String()
}

func recordArgs(args []any, r *Record) []any {
	return append(args,
		r.Start, r.ID.String(), clean(r.Key), clean(r.Provider), clean(r.Credential),
		clean(r.Model.String()), clean(r.UpstreamModel.String()), r.ClientDialect, r.UpstreamDialect, r.Transport.String(),
		int64(r.Status), clean(r.Cause), r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Reasoning, r.Estimated,
		r.CostNanoUSD, r.Priced, r.APIEquivalent, r.Latency.Microseconds(), r.TTFT.Microseconds(), r.BytesIn, r.BytesOut,
		clean(r.Guardrails.String()))
}
