package ledger

import (
	"container/heap"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"slipstream/pool"
)

// SQLite keeps records in pages (page.go): this file writes, reads and
// prunes them with the same results as the PostgreSQL SQL gives over its
// rows. A page's ts_min and ts_max bound the arrival times of its records
// (in finish order, so neighbouring pages' ranges overlap); the indexes on
// them let a range query read only the pages that can hold records in
// range. Records are decoded in Go: one pass over a page's JSON, where
// SQLite's JSON functions would parse each record once per column.

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

// pagesInRange selects the pages that can hold a record in [lo, hi).
const pagesInRange = "SELECT id, ts_min, ts_max, records FROM usage_pages WHERE ts_max >= ? AND ts_min < ?"

// totalsPages is Totals over pages.
func (d *DB) totalsPages(ctx context.Context, g Group, lo, hi int64) ([]Total, error) {
	a := totals{g: g, names: map[string]*Total{}, days: map[int64]*Total{}, scratch: make([]byte, 0, maxUnescaped)}
	var f fields
	err := d.eachPage(ctx, pagesInRange, func(p *pageRow) (bool, error) {
		return true, eachRecord(p.records, &f, func(_ int, _ []byte, f *fields) bool {
			if ts := f.int(0); ts >= lo && ts < hi {
				a.add(ts, f)
			}
			return true
		})
	}, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	return a.result(), nil
}

// maxUnescaped holds any name the writer stores, unescaped, so that the
// readers' scratch never grows.
const maxUnescaped = 3 * maxText

// totals sums records by group, as Totals' SQL does.
type totals struct {
	g       Group
	names   map[string]*Total
	days    map[int64]*Total
	scratch []byte
}

func (a *totals) add(ts int64, f *fields) {
	t := a.group(ts, f)
	t.Requests++
	if f.int(10) >= 400 || len(f.text(a.scratch[:0], 11)) > 0 {
		t.Errors++
	}
	in, out, cr, cw := f.int(12), f.int(13), f.int(14), f.int(15)
	t.Input += in
	t.Output += out
	t.CacheRead += cr
	t.CacheWrite += cw
	t.Reasoning += f.int(16)
	if f.int(19) != 0 {
		t.CostNanoUSD += f.int(18)
	} else if in+out+cr+cw > 0 {
		t.Unpriced++
	}
}

// group is the record's group's total, made on first use.
func (a *totals) group(ts int64, f *fields) *Total {
	if a.g == ByDay {
		day := ts / 86400000000 // as the SQL divides: toward zero
		t := a.days[day]
		if t == nil {
			t = &Total{Group: groupName(ByDay, day)}
			a.days[day] = t
		}
		return t
	}
	var name []byte
	switch a.g {
	case ByKey:
		name = f.text(a.scratch[:0], 2)
	case ByProvider:
		name = f.text(a.scratch[:0], 3)
	default: // ByModel: the upstream model, else the client's
		if name = f.text(a.scratch[:0], 6); len(name) == 0 {
			name = f.text(a.scratch[:0], 5)
		}
	}
	t := a.names[string(name)]
	if t == nil {
		t = &Total{Group: string(name)}
		a.names[t.Group] = t
	}
	return t
}

// result is the totals in ascending order of the group: days by number,
// names by their bytes (SQLite's BINARY collation).
func (a *totals) result() []Total {
	var ts []Total
	if a.g == ByDay {
		for _, day := range slices.Sorted(mapKeys(a.days)) {
			ts = append(ts, *a.days[day])
		}
		return ts
	}
	for _, name := range slices.Sorted(mapKeys(a.names)) {
		ts = append(ts, *a.names[name])
	}
	return ts
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// latestPages is Latest over pages: ORDER BY ts DESC, id DESC, where a
// record's id is its page's id and then its place in the page (the order
// of insertion). Pages are read latest ts_max first, until none can hold
// a record newer than the n kept.
func (d *DB) latestPages(ctx context.Context, n int) ([]Entry, error) {
	s := selection{n: limitOf(n), desc: true, scratch: make([]byte, 0, maxUnescaped)}
	var f fields
	err := d.eachPage(ctx, "SELECT id, ts_min, ts_max, records FROM usage_pages ORDER BY ts_max DESC", func(p *pageRow) (bool, error) {
		if s.n == 0 || s.full() && p.tsMax < s.items[0].k.ts {
			return false, nil
		}
		return true, eachRecord(p.records, &f, func(i int, _ []byte, f *fields) bool {
			s.offer(rankKey{f.int(0), p.id, i}, f)
			return true
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	return s.entries(), nil
}

// rangePages is Range over pages: records in [lo, hi) ORDER BY ts, id,
// the first limit. Pages are read earliest ts_min first, until none can
// hold a record earlier than the limit kept.
func (d *DB) rangePages(ctx context.Context, lo, hi int64, limit int) ([]Entry, error) {
	s := selection{n: limitOf(limit), scratch: make([]byte, 0, maxUnescaped)}
	var f fields
	err := d.eachPage(ctx, pagesInRange+" ORDER BY ts_min", func(p *pageRow) (bool, error) {
		if s.n == 0 || s.full() && p.tsMin > s.items[0].k.ts {
			return false, nil
		}
		return true, eachRecord(p.records, &f, func(i int, _ []byte, f *fields) bool {
			if ts := f.int(0); ts >= lo && ts < hi {
				s.offer(rankKey{ts, p.id, i}, f)
			}
			return true
		})
	}, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("cannot read the usage ledger %s: %w", d.where, err)
	}
	return s.entries(), nil
}

// limitOf is an SQL LIMIT as SQLite reads it: negative is no limit.
func limitOf(n int) int {
	if n < 0 {
		return math.MaxInt
	}
	return n
}

// rankKey orders records as (ts, id) does over rows: by arrival, then by
// order of insertion (page id, place in the page).
type rankKey struct {
	ts, page int64
	i        int
}

func (a rankKey) before(b rankKey) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.page != b.page {
		return a.page < b.page
	}
	return a.i < b.i
}

// selection keeps the n records that rank first (ascending rankKey, or
// descending when desc), as a heap whose top is the kept one ranked last.
type selection struct {
	n       int
	desc    bool
	items   []ranked
	scratch []byte
}

type ranked struct {
	k rankKey
	e Entry
}

// first reports whether a ranks before b.
func (s *selection) first(a, b rankKey) bool {
	if s.desc {
		return b.before(a)
	}
	return a.before(b)
}

func (s *selection) full() bool { return len(s.items) >= s.n }

// offer keeps the record f when it ranks among the first n so far.
func (s *selection) offer(k rankKey, f *fields) {
	if !s.full() {
		var r ranked
		r.k = k
		f.entry(&r.e, s.scratch)
		heap.Push(s, r)
		return
	}
	if s.n == 0 || !s.first(k, s.items[0].k) {
		return
	}
	s.items[0].k = k
	f.entry(&s.items[0].e, s.scratch)
	heap.Fix(s, 0)
}

// entries are the kept records in rank order; nil when none.
func (s *selection) entries() []Entry {
	slices.SortFunc(s.items, func(a, b ranked) int {
		if s.first(a.k, b.k) {
			return -1
		}
		return 1
	})
	var es []Entry
	for i := range s.items {
		es = append(es, s.items[i].e)
	}
	return es
}

// heap.Interface: the top is the record ranked last.
func (s *selection) Len() int           { return len(s.items) }
func (s *selection) Less(i, j int) bool { return s.first(s.items[j].k, s.items[i].k) }
func (s *selection) Swap(i, j int)      { s.items[i], s.items[j] = s.items[j], s.items[i] }
func (s *selection) Push(x any)         { s.items = append(s.items, x.(ranked)) }
func (s *selection) Pop() any {
	r := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return r
}

// countPages is Count over pages.
func (d *DB) countPages(ctx context.Context) (int64, error) {
	var n int64
	err := d.db.QueryRowContext(ctx, "SELECT COALESCE(SUM(n), 0) FROM usage_pages").Scan(&n)
	return n, err
}

// prunePageChunk is how many pages one DELETE of Prune removes (at most
// pruneChunk records' worth of pages of a full size).
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
	if err == sql.ErrNoRows {
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
