package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"slipstream/pool"
)

// prunePageChunk is how many pages one DELETE of Prune removes (about
// pruneChunk records' worth of full pages).
const prunePageChunk = pruneChunk/pageRecords + 1

// prunePages is Prune over pages: the pages wholly before cut are
// deleted, in chunks; a page that straddles cut is rewritten without its
// records before cut. It returns how many records it deleted.
func (d *DB) prunePages(ctx context.Context, cut int64) (int64, error) {
	var total int64
	for {
		n, pages, err := d.deletePages(ctx, cut)
		total += n
		if err != nil {
			return total, err
		}
		if pages < prunePageChunk {
			break
		}
	}
	for {
		n, more, err := d.trimPage(ctx, cut)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// deletePages deletes up to prunePageChunk pages whose records all
// arrived before cut, and returns how many records and pages it deleted.
func (d *DB) deletePages(ctx context.Context, cut int64) (records, pages int64, err error) {
	rows, err := d.db.QueryContext(ctx, "DELETE FROM usage_pages WHERE id IN (SELECT id FROM usage_pages WHERE ts_max < ? LIMIT ?) RETURNING n", cut, prunePageChunk)
	if err != nil {
		return 0, 0, err
	}
	defer closeRows(rows, &err)
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return records, pages, err
		}
		records += n
		pages++
	}
	return records, pages, rows.Err()
}

// trimPage rewrites one page that straddles cut without its records
// before cut, in one transaction (the read and the write under SQLite's
// write lock, taken at BEGIN). It reports how many records it removed and
// whether there was such a page. The page keeps its id, so its records
// keep their place in the order of insertion.
func (d *DB) trimPage(ctx context.Context, cut int64) (removed int64, more bool, err error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var id int64
	var records string
	err = tx.QueryRowContext(ctx, "SELECT id, records FROM usage_pages WHERE ts_min < ? AND ts_max >= ? LIMIT 1", cut, cut).Scan(&id, &records)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, tx.Commit()
	}
	if err != nil {
		return 0, false, err
	}
	var b strings.Builder
	b.WriteByte('[')
	kept, tsMin := int64(0), int64(math.MaxInt64)
	var f fields
	err = eachRecord(pool.S2B(records), &f, func(_ int, rec []byte, f *fields) bool {
		ts := f.int(0)
		if ts < cut {
			removed++
			return true
		}
		if kept > 0 {
			b.WriteByte(',')
		}
		b.Write(rec)
		kept++
		tsMin = min(tsMin, ts)
		return true
	})
	if err != nil {
		return 0, false, fmt.Errorf("page %d: %w", id, err)
	}
	b.WriteByte(']')
	if kept == 0 {
		_, err = tx.ExecContext(ctx, "DELETE FROM usage_pages WHERE id = ?", id)
	} else {
		_, err = tx.ExecContext(ctx, "UPDATE usage_pages SET ts_min = ?, n = ?, records = ? WHERE id = ?", tsMin, kept, b.String(), id)
	}
	if err != nil {
		return 0, false, err
	}
	return removed, true, tx.Commit()
}
