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
// 256 records (the default batch size), in one transaction each. The
// request path never pays it, but the process does: it is what the ledger
// adds to a request's CPU.
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
