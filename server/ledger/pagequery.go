package ledger

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
)

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
