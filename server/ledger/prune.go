package ledger

import (
	"context"
	"time"
)

// pruneChunk is how many rows one DELETE of Prune removes (about, in
// SQLite's pages), so that a large prune never holds the write lock (and
// the writer) for long.
const pruneChunk = 5000

// Prune deletes the records of requests that arrived before t and
// returns how many it deleted. SQLite's pages are deleted or rewritten by
// prunePages.
func (d *DB) Prune(ctx context.Context, t time.Time) (int64, error) {
	if err := d.ensureSchema(ctx); err != nil {
		return 0, err
	}
	if !d.postgres {
		return d.prunePages(ctx, t.UnixMicro())
	}
	const q = "DELETE FROM usage_records WHERE id IN (SELECT id FROM usage_records WHERE ts < $1 LIMIT $2)"
	var total int64
	for {
		res, err := d.db.ExecContext(ctx, q, t.UnixMicro(), pruneChunk)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneChunk {
			return total, nil
		}
	}
}
