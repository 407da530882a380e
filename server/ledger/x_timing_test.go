package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"slipstream/pool"
)

// BenchmarkInsert is the writer's cost per record into SQLite: batches of
// 256 records (the default batch size), each encoded into a page and
// written in one transaction, as the writer does. The request path never
// pays it, but the process does: it is what the ledger adds to a
// request's CPU, besides the queue (BenchmarkLedger). Measure CPU, not
// ns/op: go test -c -o /tmp/ledger.test ./server/ledger && /usr/bin/time
// /tmp/ledger.test -test.run '^$' -test.bench 'Insert$' -test.benchtime 1000000x
func BenchmarkInsert(b *testing.B) {
	d, err := Open(context.Background(), filepath.Join(b.TempDir(), "usage.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	rs := benchRecords(256)
	b.ResetTimer()
	for i := 0; i < b.N; i += len(rs) {
		if err := d.Insert(context.Background(), rs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendPage is the Go side of the writer's cost: a batch of 256
// records appended as one page to a reused buffer. BenchmarkMarshalPage,
// the baseline, marshals the same values with encoding/json.
func BenchmarkAppendPage(b *testing.B) {
	rs := benchRecords(256)
	var buf []byte
	var w pageWriter
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(rs) {
		buf, _, _, _ = w.appendPage(buf[:0], rs)
	}
	b.SetBytes(int64(len(buf) / len(rs)))
}

func BenchmarkMarshalPage(b *testing.B) {
	rs := benchRecords(256)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i += len(rs) {
		page := make([][]any, 0, len(rs))
		for j := range rs {
			page = append(page, recordArgs(nil, &rs[j]))
		}
		out, err := json.Marshal(page)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.SetBytes(int64(n / len(rs)))
}

func benchRecords(n int) []Record {
	rs := make([]Record, n)
	now := time.Now()
	for i := range rs {
		rs[i] = rec(now, fmt.Sprintf("c9488fec-%011d", i), "alice", "anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", 200, 2900, 120, 43750, true)
	}
	return rs
}

// BenchmarkInsertSQL is BenchmarkInsert's baseline: the same pages
// written through database/sql, one prepared INSERT per page. lite (the C
// API) stays only while BenchmarkInsert costs less CPU than this.
func BenchmarkInsertSQL(b *testing.B) {
	d, err := Open(context.Background(), filepath.Join(b.TempDir(), "usage.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	rs := benchRecords(256)
	st, err := d.db.Prepare(insertPageSQL)
	if err != nil {
		b.Fatal(err)
	}
	var page []byte
	var w pageWriter
	b.ResetTimer()
	for i := 0; i < b.N; i += len(rs) {
		tx, err := d.db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		for rest := rs; len(rest) > 0; {
			var n int
			var lo, hi int64
			page, n, lo, hi = w.appendPage(page[:0], rest)
			if _, err := tx.Stmt(st).Exec(lo, hi, int64(n), pool.B2S(page)); err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueries reads a ledger of queryRecords records (30 days, 20
// keys, 5 models, written in batches of 256): Totals over everything and
// over one day, Latest(50), and Range of the first 1000 of a day. Each
// op is one query.
func BenchmarkQueries(b *testing.B) {
	const queryRecords = 1 << 20
	d, err := Open(context.Background(), filepath.Join(b.TempDir(), "usage.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := 30 * 24 * time.Hour / queryRecords
	batch := make([]Record, 0, 256)
	for i := range queryRecords {
		at := start.Add(time.Duration(i) * step).Add(-time.Duration(i%7) * time.Second) // finish order
		key, model := fmt.Sprintf("key-%02d", i%20), fmt.Sprintf("model-%d", i%5)
		batch = append(batch, rec(at, fmt.Sprintf("c9488fec-%011d", i), key, "anthropic", model, model, 200, 2900, 120, 43750, true))
		if len(batch) == cap(batch) || i == queryRecords-1 {
			if err := d.Insert(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	day := start.Add(15 * 24 * time.Hour)
	ctx := context.Background()
	for _, q := range []struct {
		name string
		f    func() (int, error)
	}{
		{"TotalsAll", func() (int, error) { ts, err := d.Totals(ctx, ByKey, time.Time{}, time.Time{}); return len(ts), err }},
		{"TotalsDay", func() (int, error) {
			ts, err := d.Totals(ctx, ByModel, day, day.Add(24*time.Hour))
			return len(ts), err
		}},
		{"Latest50", func() (int, error) { es, err := d.Latest(ctx, 50); return len(es), err }},
		{"Range1000", func() (int, error) { es, err := d.Range(ctx, day, day.Add(24*time.Hour), 1000); return len(es), err }},
	} {
		b.Run(q.name, func(b *testing.B) {
			for range b.N {
				if n, err := q.f(); err != nil || n == 0 {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkLedger is the whole ledger's cost per record as a server pays
// it: Add on the request path, the queue, and the writer's batches of 256
// into SQLite. The producer waits (sleeping, not spinning) while the
// queue is half full, so that no record is dropped.
func BenchmarkLedger(b *testing.B) {
	d, err := Open(context.Background(), filepath.Join(b.TempDir(), "usage.db"))
	if err != nil {
		b.Fatal(err)
	}
	l := Start(d, Options{QueueSize: DefaultQueueSize, BatchSize: DefaultBatchSize, Retention: -1})
	rs := benchRecords(256)
	b.ResetTimer()
	for i := range b.N {
		for l.pending.Load() > DefaultQueueSize/2 {
			time.Sleep(100 * time.Microsecond)
		}
		l.Add(&rs[i%len(rs)])
	}
	if err := l.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	if st := l.Stats(); st.Dropped != 0 || st.Written != int64(b.N) {
		b.Fatalf("%+v", st)
	}
}
