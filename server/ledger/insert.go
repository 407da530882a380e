package ledger

import (
	"context"
	"strings"
)

// columns are usage_records' columns as Insert writes them, in the order
// of recordArgs.
const columns = "ts, request_id, key_name, provider, credential, model, upstream_model, client_dialect, upstream_dialect, transport, " +
	"status, cause, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated, " +
	"cost_nano_usd, priced, api_equivalent, latency_us, ttft_us, bytes_in, bytes_out"

const numColumns = 25

// rowsPerStatement bounds one INSERT's rows, under both databases' limits
// on bound parameters.
const rowsPerStatement = 200

// Insert writes rs in one transaction: all of them or none. It applies
// the migrations first when Open could not.
func (d *DB) Insert(ctx context.Context, rs []Record) error {
	if len(rs) == 0 {
		return nil
	}
	if err := d.ensureSchema(ctx); err != nil {
		return err
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	args := make([]any, 0, min(len(rs), rowsPerStatement)*numColumns)
	for len(rs) > 0 {
		n := min(len(rs), rowsPerStatement)
		args = args[:0]
		for i := range rs[:n] {
			args = recordArgs(args, &rs[i])
		}
		if _, err := tx.ExecContext(ctx, d.insertSQL(n), args...); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return tx.Commit()
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
		r.CostNanoUSD, r.Priced, r.APIEquivalent, r.Latency.Microseconds(), r.TTFT.Microseconds(), r.BytesIn, r.BytesOut)
}
