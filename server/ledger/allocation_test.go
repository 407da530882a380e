//go:build !race

package ledger

import (
	"path/filepath"
	"testing"
	"time"
)

// TestAddAllocs: the request path's part, Add, allocates nothing, when
// the record is queued and when it is dropped.
func TestAddAllocs(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	l := Start(d, Options{QueueSize: 1 << 14, Interval: time.Hour, BatchSize: 1 << 14, Retention: -1})
	defer l.Close(t.Context())
	model := []byte("claude-sonnet-4-5")
	id := []byte("0123abcd-00000000001")
	n := testing.AllocsPerRun(1000, func() {
		var r Record
		r.ID.Set(id)
		r.Model.Set(model)
		r.UpstreamModel.Set(model)
		r.Key, r.Status, r.Input = "k", 200, 10
		l.Add(&r)
	})
	if n != 0 {
		t.Fatalf("Add allocates %v times per record, want 0", n)
	}
	full := Start(open(t, filepath.Join(t.TempDir(), "full.db")), Options{QueueSize: 1, Interval: time.Hour, BatchSize: 1 << 14, Retention: -1, Counters: &countersT{}})
	defer full.Close(t.Context())
	r := Record{Key: "k"}
	full.Add(&r)
	if n := testing.AllocsPerRun(1000, func() { full.Add(&r) }); n != 0 {
		t.Fatalf("a dropped Add allocates %v times, want 0", n)
	}
}

// TestWriterWakesPerBatch: a burst of records wakes the writer once per
// batch it starts, not once per record: a wake-up per request cost more
// CPU than the request. Every record is still written within Interval.
func TestWriterWakesPerBatch(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	l := Start(d, Options{QueueSize: 4096, BatchSize: 256, Interval: 20 * time.Millisecond, Retention: -1})
	defer l.Close(t.Context())
	const n = 2000
	for i := range n {
		r := Record{Key: "k", Input: int64(i)}
		l.Add(&r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().Written < n {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %+v", l.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if w := l.wakes.Load(); w > n/256+2 {
		t.Fatalf("the writer was woken %d times for %d records in batches of 256", w, n)
	}
	// Idle again: one more record is written within the interval.
	r := Record{Key: "late"}
	l.Add(&r)
	for l.Stats().Written < n+1 {
		if time.Now().After(deadline) {
			t.Fatalf("a record after a pause was not written: %+v", l.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInsertAllocs: the SQLite writer allocates nothing per record in Go:
// a batch of 256 (one page, appended to the writer's buffer) costs the
// same few allocations as a batch of 1 (the transaction's context check
// and nothing else), give or take perPage for the runtime's own
// variation. An allocation per record would be 256 more.
func TestInsertAllocs(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	now := time.Now()
	batch := func(n int) []Record {
		rs := make([]Record, n)
		for i := range rs {
			rs[i] = rec(now, "c9488fec-1", "alice", "anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", 200, 2900, 120, 43750, true)
		}
		return rs
	}
	one, many := batch(1), batch(256)
	if err := d.Insert(t.Context(), one); err != nil { // opens the writer
		t.Fatal(err)
	}
	a1 := testing.AllocsPerRun(100, func() { _ = d.Insert(t.Context(), one) })
	a256 := testing.AllocsPerRun(100, func() { _ = d.Insert(t.Context(), many) })
	const perPage = 4
	if a256 > a1+perPage {
		t.Fatalf("a batch of 256 allocates %v times, a batch of 1 %v: the writer allocates per record", a256, a1)
	}
}
