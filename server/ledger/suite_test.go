package ledger

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"slipstream/internal/pgtest"
)

// backends runs f against each database the ledger supports: a new
// SQLite file and a new real PostgreSQL cluster. The same suite runs on
// both.
func backends(t *testing.T, f func(t *testing.T, database string)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, filepath.Join(t.TempDir(), "state", "slipstream", "usage.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, pgtest.Start(t).URL())
	})
}

func open(t *testing.T, database string) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := Open(ctx, database)
	if err != nil {
		if d != nil {
			d.Close()
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// day0 is a fixed UTC midnight the scripted records start from.
var day0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// rec builds a record; names are copied into the record's arrays as the
// request path does.
func rec(at time.Time, id, key, provider, model, upModel string, status int32, in, out int64, cost int64, priced bool) Record {
	r := Record{
		Start: at.UnixMicro(), Key: key, Provider: provider, Credential: "cred-" + provider,
		ClientDialect: "anthropic", UpstreamDialect: "openai-chat", Status: status,
		Input: in, Output: out, CacheRead: in / 2, CacheWrite: in / 4, Reasoning: out / 3,
		CostNanoUSD: cost, Priced: priced, Latency: 1500 * time.Microsecond, TTFT: 700 * time.Microsecond,
		BytesIn: 100 + in, BytesOut: 200 + out,
	}
	r.ID.Set([]byte(id))
	r.Model.Set([]byte(model))
	r.UpstreamModel.Set([]byte(upModel))
	return r
}

// script is a small day of traffic over two days, two keys, two
// providers, with an error, an unpriced model and a refused request.
func script() []Record {
	rs := []Record{
		rec(day0.Add(1*time.Hour), "a-1", "alice", "anthropic", "sonnet", "claude-sonnet-4-5", 200, 1000, 500, 9_000_000, true),
		rec(day0.Add(2*time.Hour), "a-2", "alice", "openai", "gpt-5", "gpt-5", 200, 2000, 100, 3_500_000, true),
		rec(day0.Add(3*time.Hour), "a-3", "bob", "openai", "gpt-5", "gpt-5", 502, 0, 0, 0, false),
		rec(day0.Add(25*time.Hour), "a-4", "bob", "local", "llama", "llama-3", 200, 300, 30, 0, false),
		rec(day0.Add(26*time.Hour), "a-5", "alice", "anthropic", "sonnet", "claude-sonnet-4-5", 200, 10, 5, 90_000, true),
		rec(day0.Add(27*time.Hour), "a-6", "", "", "nope", "", 404, 0, 0, 0, false),
	}
	rs[1].Cause = ""
	rs[2].Cause = "refused"
	rs[3].Estimated = true
	rs[4].Transport = WebSocket
	rs[4].APIEquivalent = true
	return rs
}

// The suite: each test runs on a fresh database of each kind.
func TestRoundtrip(t *testing.T)  { backends(t, testRoundtrip) }
func TestTotals(t *testing.T)     { backends(t, testTotals) }
func TestMigrations(t *testing.T) { backends(t, testMigrations) }
func TestPrune(t *testing.T)      { backends(t, testPrune) }
func TestLedger(t *testing.T)     { backends(t, testLedger) }
func TestReplicas(t *testing.T)   { backends(t, testReplicas) }
func TestRetention(t *testing.T)  { backends(t, testRetention) }
func TestUpgrade(t *testing.T)    { backends(t, testUpgrade) }

// testRoundtrip: every field written comes back, hostile names stored as
// valid text.
func testRoundtrip(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	rs := script()
	long := strings.Repeat("é", 60) // 120 bytes: cut inside a character
	rs[0].Model.Set([]byte(long))
	rs[1].UpstreamModel.Set([]byte("bad\xff\x00name"))
	rs[4].Guardrails.Set([]byte("aws_access_key_id,github_token"))
	if err := d.Insert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	es, err := d.Range(ctx, time.Time{}, time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(rs) {
		t.Fatalf("%d entries, want %d", len(es), len(rs))
	}
	want := entryOf(&rs[4])
	if !reflect.DeepEqual(es[4], want) {
		t.Fatalf("entry:\n got %+v\nwant %+v", es[4], want)
	}
	if got := es[0].Model; got != strings.Repeat("é", MaxName/2) {
		t.Fatalf("long model stored as %q", got)
	}
	if got := es[1].UpstreamModel; got != "bad\uFFFDname" {
		t.Fatalf("hostile model stored as %q", got)
	}
	if es[2].Cause != "refused" || !es[3].Estimated || es[4].Transport != "websocket" || !es[4].APIEquivalent {
		t.Fatalf("flags: %+v", es)
	}
	latest, err := d.Latest(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(latest) != 2 || latest[0].ID != "a-6" || latest[1].ID != "a-5" {
		t.Fatalf("latest: %+v", latest)
	}
}

func entryOf(r *Record) Entry {
	return Entry{
		Time: time.UnixMicro(r.Start).UTC(), ID: r.ID.String(), Key: r.Key, Provider: r.Provider, Credential: r.Credential,
		Model: r.Model.String(), UpstreamModel: r.UpstreamModel.String(), ClientDialect: r.ClientDialect,
		UpstreamDialect: r.UpstreamDialect, Transport: r.Transport.String(), Status: int(r.Status), Cause: r.Cause,
		Input: r.Input, Output: r.Output, CacheRead: r.CacheRead, CacheWrite: r.CacheWrite, Reasoning: r.Reasoning,
		Estimated: r.Estimated, CostNanoUSD: r.CostNanoUSD, Priced: r.Priced, APIEquivalent: r.APIEquivalent,
		Latency: r.Latency, TTFT: r.TTFT, BytesIn: r.BytesIn, BytesOut: r.BytesOut, Guardrails: r.Guardrails.String(),
	}
}

// testTotals: the sums of each grouping equal the sums computed here
// from the records.
func testTotals(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	rs := script()
	if err := d.Insert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	for _, g := range []Group{ByKey, ByModel, ByProvider, ByDay} {
		got, err := d.Totals(ctx, g, day0, day0.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if want := expectTotals(rs, g, day0, day0.Add(48*time.Hour)); !reflect.DeepEqual(got, want) {
			t.Fatalf("by %s:\n got %+v\nwant %+v", g, got, want)
		}
	}
	// A range keeps only its records: [day0+1h30, day0+25h30) holds a-2..a-4.
	got, err := d.Totals(ctx, ByDay, day0.Add(90*time.Minute), day0.Add(25*time.Hour+30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := []Total{
		{Group: "2026-11-30", Requests: 2, Errors: 1, Input: 2000, Output: 100, CacheRead: 1000, CacheWrite: 500, Reasoning: 33, CostNanoUSD: 3_500_000},
		{Group: "2026-12-01", Requests: 1, Input: 300, Output: 30, CacheRead: 150, CacheWrite: 75, Reasoning: 10, Unpriced: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("range:\n got %+v\nwant %+v", got, want)
	}
	if _, err := d.Totals(ctx, "colour", time.Time{}, time.Time{}); err == nil {
		t.Fatal("an unknown grouping was accepted")
	}
}

// expectTotals is Totals computed in Go, the reference.
func expectTotals(rs []Record, g Group, from, to time.Time) []Total {
	m := map[string]*Total{}
	var order []string
	for i := range rs {
		r := &rs[i]
		if r.Start < from.UnixMicro() || r.Start >= to.UnixMicro() {
			continue
		}
		var k string
		switch g {
		case ByKey:
			k = r.Key
		case ByProvider:
			k = r.Provider
		case ByModel:
			k = r.UpstreamModel.String()
			if k == "" {
				k = r.Model.String()
			}
		case ByDay:
			k = time.UnixMicro(r.Start).UTC().Format(time.DateOnly)
		}
		tot := m[k]
		if tot == nil {
			tot = &Total{Group: k}
			m[k] = tot
			order = append(order, k)
		}
		tot.Requests++
		if r.Status >= 400 || r.Cause != "" {
			tot.Errors++
		}
		tot.Input += r.Input
		tot.Output += r.Output
		tot.CacheRead += r.CacheRead
		tot.CacheWrite += r.CacheWrite
		tot.Reasoning += r.Reasoning
		if r.Priced {
			tot.CostNanoUSD += r.CostNanoUSD
		} else if r.Input+r.Output+r.CacheRead+r.CacheWrite > 0 {
			tot.Unpriced++
		}
	}
	sortStrings(order)
	out := make([]Total, 0, len(order))
	for _, k := range order {
		out = append(out, *m[k])
	}
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// testMigrations: opening again, and from several replicas at once,
// applies each migration once and keeps the rows.
func testMigrations(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	if err := d.Insert(ctx, script()[:2]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d2, err := Open(ctx, database)
			if d2 != nil {
				d2.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var rows, version int
	if err := d.db.QueryRowContext(ctx, "SELECT COUNT(*), MAX(version) FROM schema_version").Scan(&rows, &version); err != nil {
		t.Fatal(err)
	}
	if rows != len(migrations) || version != SchemaVersion() {
		t.Fatalf("schema_version: %d rows, version %d; want %d, %d", rows, version, len(migrations), SchemaVersion())
	}
	if n, err := d.Count(ctx); err != nil || n != 2 {
		t.Fatalf("records after reopening: %d, %v", n, err)
	}
	// A database from a newer slipstream is refused, not written.
	if _, err := d.db.ExecContext(ctx, "INSERT INTO schema_version (version, applied_us) VALUES (999, 0)"); err != nil {
		t.Fatal(err)
	}
	d3, err := Open(ctx, database)
	if d3 != nil {
		d3.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "newer than this slipstream knows") {
		t.Fatalf("newer schema: %v", err)
	}
}

// testPrune: Prune deletes exactly the records before its time, across
// several chunks.
func testPrune(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	var rs []Record
	n := pruneChunk + 10
	for i := range n + 5 {
		at := day0.Add(time.Duration(i) * time.Second)
		rs = append(rs, rec(at, "p", "k", "p", "m", "m", 200, 1, 1, 0, false))
	}
	if err := d.Insert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	got, err := d.Prune(ctx, day0.Add(time.Duration(n)*time.Second))
	if err != nil || got != int64(n) {
		t.Fatalf("Prune: %d, %v; want %d", got, err, n)
	}
	if left, err := d.Count(ctx); err != nil || left != 5 {
		t.Fatalf("left: %d, %v", left, err)
	}
}

// testLedger: records added through the queue are all written, in
// batches, and counted.
func testLedger(t *testing.T, database string) {
	d := open(t, database)
	c := &countersT{}
	l := Start(d, Options{BatchSize: 7, Interval: 10 * time.Millisecond, Counters: c, Retention: -1})
	r := rec(day0, "l", "k", "p", "m", "m", 200, 1, 2, 3, true)
	for range 100 {
		l.Add(&r)
	}
	waitFor(t, func() bool { return l.Stats().Written == 100 })
	ctx := context.Background()
	if n, err := d.Count(ctx); err != nil || n != 100 {
		t.Fatalf("rows %d, %v", n, err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	l.Add(&r) // after Close: dropped, counted
	st := l.Stats()
	if st.Added != 101 || st.Written != 100 || st.Dropped != 1 || c.written.Load() != 100 || c.dropped.Load() != 1 {
		t.Fatalf("stats %+v, counters %d/%d", st, c.written.Load(), c.dropped.Load())
	}
}

// testReplicas: two ledgers (two replicas) write one database at once.
func testReplicas(t *testing.T, database string) {
	a, b := open(t, database), open(t, database)
	la := Start(a, Options{BatchSize: 16, Interval: 5 * time.Millisecond, Retention: -1})
	lb := Start(b, Options{BatchSize: 16, Interval: 5 * time.Millisecond, Retention: -1})
	var wg sync.WaitGroup
	for i, l := range []*Ledger{la, lb} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rec(day0, "r", []string{"a", "b"}[i], "p", "m", "m", 200, 1, 1, 0, false)
			for range 300 {
				l.Add(&r)
				time.Sleep(50 * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	ctx := context.Background()
	for _, l := range []*Ledger{la, lb} {
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if st := l.Stats(); st.Written+st.Dropped != 300 {
			t.Fatalf("stats %+v", st)
		}
	}
	c := open(t, database)
	ts, err := c.Totals(ctx, ByKey, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Requests != la.Stats().Written || ts[1].Requests != lb.Stats().Written || ts[0].Requests == 0 {
		t.Fatalf("totals %+v; written %d and %d", ts, la.Stats().Written, lb.Stats().Written)
	}
}

// count is d's rows, or -1 when it cannot say.
func count(ctx context.Context, d *DB) int64 {
	n, err := d.Count(ctx)
	if err != nil {
		return -1
	}
	return n
}

// testRetention: the writer prunes records past the retention on its
// first tick.
func testRetention(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	now := day0.Add(100 * 24 * time.Hour)
	old := rec(now.Add(-91*24*time.Hour), "old", "k", "p", "m", "m", 200, 1, 1, 0, false)
	recent := rec(now.Add(-89*24*time.Hour), "new", "k", "p", "m", "m", 200, 1, 1, 0, false)
	if err := d.Insert(ctx, []Record{old, recent}); err != nil {
		t.Fatal(err)
	}
	l := Start(d, Options{Interval: 5 * time.Millisecond, Now: func() time.Time { return now }})
	defer l.Close(ctx)
	// Pruning follows a write: an idle ledger touches nothing.
	time.Sleep(50 * time.Millisecond)
	if n, _ := d.Count(ctx); n != 2 {
		t.Fatalf("an idle ledger pruned: %d rows", n)
	}
	cur := rec(now, "now", "k", "p", "m", "m", 200, 1, 1, 0, false)
	l.Add(&cur)
	// Written first: counted before the write's commit, the rows would
	// still be the two of before it.
	waitFor(t, func() bool { return l.Stats().Written == 1 && count(ctx, d) == 2 })
	es, err := d.Latest(ctx, 10)
	if err != nil || len(es) != 2 || es[0].ID != "now" || es[1].ID != "new" {
		t.Fatalf("left: %+v, %v", es, err)
	}
}

func waitFor(t *testing.T, ok func() bool, state ...func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			for _, f := range state {
				t.Log(f())
			}
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLiteText: what the SQLite writer stores for awkward names, as the
// PostgreSQL path (clean) stores them: a model name cut inside a UTF-8
// character loses the partial character; runs of invalid bytes become one
// U+FFFD; NUL is dropped; a configured name longer than 512 bytes is
// stored cut.
func TestLiteText(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	ctx := t.Context()
	long := "a" + strings.Repeat("é", MaxName) // cut at MaxName bytes, inside an é
	r := rec(time.Now(), "t-1", "k\x00ey", "p", "m", "m", 200, 1, 1, 0, false)
	r.Model.Set([]byte(long))
	r.UpstreamModel.Set([]byte("a\xff\xfe\x00\xffb"))
	if err := d.Insert(ctx, []Record{r}); err != nil {
		t.Fatal(err)
	}
	es, err := d.Latest(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := long[:MaxName-1]
	if len(es) != 1 || es[0].Model != want || es[0].UpstreamModel != "a\uFFFD\uFFFDb" || es[0].Key != "key" {
		t.Fatalf("stored %q / %q / %q", es[0].Model, es[0].UpstreamModel, es[0].Key)
	}
	huge := rec(time.Now().Add(time.Second), "t-2", strings.Repeat("\xff", 4*maxText), "p", strings.Repeat("€", maxText), "m", 200, 1, 1, 0, false)
	huge.Credential = strings.Repeat("\xff", 4*maxText)
	if err := d.Insert(ctx, []Record{huge}); err != nil {
		t.Fatal(err)
	}
	if es, _ := d.Latest(ctx, 1); len(es) != 1 || es[0].Key != "\uFFFD" || es[0].Provider != "p" {
		t.Fatalf("a long name stored as %q", es[0].Key)
	}
}

// testUpgrade: a ledger written by a slipstream of schema version 1 is
// brought to the current version on open; its rows stay, with no
// guardrails.
func testUpgrade(t *testing.T, database string) {
	ctx := context.Background()
	d, err := OpenLazy(database)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_us BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := d.apply(ctx, tx, &migrations[0]); err != nil {
		t.Fatal(err)
	}
	r := script()[0]
	v1 := strings.TrimSuffix(columns, ", guardrails")
	var q strings.Builder
	q.WriteString("INSERT INTO usage_records (" + v1 + ") VALUES (")
	for i := 1; i < numColumns; i++ {
		if i > 1 {
			q.WriteByte(',')
		}
		d.ph(&q, i)
	}
	q.WriteByte(')')
	args := recordArgs(nil, &r)
	if _, err := tx.ExecContext(ctx, q.String(), args[:numColumns-1]...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	es, err := d.Latest(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].ID != r.ID.String() || es[0].Guardrails != "" {
		t.Fatalf("after the upgrade: %+v", es)
	}
	r.Guardrails.Set([]byte("jwt"))
	if err := d.Insert(ctx, []Record{r}); err != nil {
		t.Fatal(err)
	}
	if es, _ := d.Latest(ctx, 10); len(es) != 2 || es[0].Guardrails != "jwt" && es[1].Guardrails != "jwt" {
		t.Fatalf("a record after the upgrade: %+v", es)
	}
}
