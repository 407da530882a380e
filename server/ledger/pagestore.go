package ledger

import (
	"context"
	"database/sql"
)

// SQLite keeps records in pages (page.go): this file writes them and
// reads them back page by page; pagequery.go and pageprune.go answer
// queries and prune with the same results as the PostgreSQL SQL gives
// over its rows. A page's ts_min and ts_max bound the arrival times of its
// records (in finish order, so neighbouring pages' ranges overlap); the
// indexes on them let a range query read only the pages that can hold
// records in range. Records are decoded in Go: one pass over a page's
// JSON, where SQLite's JSON functions would parse each record once per
// column.

const insertPageSQL = "INSERT INTO usage_pages (ts_min, ts_max, n, records) VALUES (?, ?, ?, ?)"

// insertPages writes rs as pages through lite, opening it on first use. A
// failed write closes it, so that the next one starts on a fresh
// connection.
func (d *DB) insertPages(ctx context.Context, rs []Record) error {
	d.liteMu.Lock()
	defer d.liteMu.Unlock()
	if d.lite == nil {
		l, err := openLite(d.path)
		if err != nil {
			return err
		}
		d.lite = l
	}
	err := d.lite.insert(ctx, rs)
	if err != nil {
		d.lite.close()
		d.lite = nil
	}
	return err
}

// pageRow is one row of usage_pages as a query reads it. records is
// valid until the next row is read.
type pageRow struct {
	id, tsMin, tsMax int64
	records          sql.RawBytes
}

// eachPage runs q, which selects id, ts_min, ts_max, records, and calls
// fn on each page until fn returns false or an error.
func (d *DB) eachPage(ctx context.Context, q string, fn func(p *pageRow) (bool, error), args ...any) (err error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer closeRows(rows, &err)
	var p pageRow
	for rows.Next() {
		if err := rows.Scan(&p.id, &p.tsMin, &p.tsMax, &p.records); err != nil {
			return err
		}
		more, err := fn(&p)
		if err != nil || !more {
			return err
		}
	}
	return rows.Err()
}

// eachRecord calls fn on each record of page (rec, the raw inner array,
// valid as long as page), its values split into f, with its index in the
// page, until fn returns false.
func eachRecord(page []byte, f *fields, fn func(i int, rec []byte, f *fields) bool) error {
	for i := 0; ; i++ {
		rec, tail, err := f.next(page)
		if err != nil || rec == nil {
			return err
		}
		if !fn(i, rec, f) {
			return nil
		}
		page = tail
	}
}

// countPages is Count over pages.
func (d *DB) countPages(ctx context.Context) (int64, error) {
	var n int64
	err := d.db.QueryRowContext(ctx, "SELECT COALESCE(SUM(n), 0) FROM usage_pages").Scan(&n)
	return n, err
}
