package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// storedText is what the ledger stores for a name given as s with room
// for max bytes, as the SQLite writer stored it before pages (and as the
// PostgreSQL path, clean, repairs it): cut to max bytes at a whole UTF-8
// character, each run of invalid bytes one U+FFFD, NUL dropped.
func storedText(s string, max int) string {
	b := []byte(s)
	return clean(string(wholeRunes(b[:min(len(b), max)], max)))
}

// TestJSONText: a name appended to a page is one valid JSON string that
// reads back, through encoding/json and through the page reader, as the
// ledger stores that name.
func TestJSONText(t *testing.T) {
	f := func(s string, max int) {
		t.Helper()
		out := appendJSONText([]byte("x"), []byte(s), max)[1:]
		want := storedText(s, max)
		var got string
		if err := json.Unmarshal(out, &got); err != nil || got != want {
			t.Fatalf("%q: %s: %q (%v), want %q", s, out, got, err, want)
		}
		var fs fields
		fs[0] = out
		if got := string(fs.text(nil, 0)); got != want {
			t.Fatalf("%q: read back %q, want %q", s, got, want)
		}
	}
	f("", maxText)
	f("alice", maxText)
	f(`a"b\c`, maxText)
	f("tab\there\nnl\r\x01\x1f\x7f", maxText)
	f("nul\x00byte", maxText)
	f("bad\xff\xfe\x00\xffutf8", maxText)
	f("é€😀 and \u2028", maxText)
	f(strings.Repeat("é", MaxName), MaxName) // cut inside a character
	f(strings.Repeat(`"\`, 6000), maxText)   // 12 KB of escapes
	f(strings.Repeat("\x01", 10<<10), maxText)
	f("\xef\xbf\xbd is U+FFFD itself", maxText)
	// Every byte value, at every alignment of the eight-byte scan.
	for c := range 256 {
		for pad := range 9 {
			f(strings.Repeat("a", pad)+string([]byte{byte(c)})+"tail-of-it", maxText)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\"\\\x00\x01\n\x7f\x80\xbf\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff")
	for range 5000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		f(string(b), 1+rng.IntN(40))
	}
}

// FuzzJSONText: the same property over any bytes.
func FuzzJSONText(f *testing.F) {
	f.Add("alice", 512)
	f.Add("a\"\\\x00\xff\xfe\U0001F600", 7)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = 1 + abs(max)%600
		out := appendJSONText(nil, []byte(s), max)
		var got string
		if err := json.Unmarshal(out, &got); err != nil || got != storedText(s, max) {
			t.Fatalf("%q: %s: %q (%v)", s, out, got, err)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestUnescape: the escapes SQLite's JSON functions write (the v3
// migration writes pages with json_array) read back.
func TestUnescape(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(unescape(nil, []byte(in))); got != want {
			t.Fatalf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
	f(`plain`, "plain")
	f(`\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t")
	f(`\u0001\u001F\u00e9`, "\x01\x1fé")
	f(`\ud83d\ude00!`, "😀!")
	f(`\ud83d!`, "\uFFFD!") // a lone surrogate
	f(`\ude00`, "\uFFFD")
	f(`\u12`, `\u12`) // malformed: as written
}

// TestAppendUint: numbers as strconv writes them.
func TestAppendUint(t *testing.T) {
	f := func(v int64) {
		t.Helper()
		if got := string(appendSigned([]byte("x"), v)); got != "x"+strconv.FormatInt(v, 10) {
			t.Fatalf("%d written as %s", v, got)
		}
		if v >= 0 {
			if got := string(appendUint(nil, uint64(v))); got != strconv.FormatInt(v, 10) {
				t.Fatalf("%d written as %s", v, got)
			}
		}
	}
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 10001, 99999, 100000, 123456789, 1764645000000000, math.MaxInt64, -1, -10000, math.MinInt64} {
		f(v)
	}
	for v := int64(0); v < 200_000; v += 3 {
		f(v)
	}
	if got := string(appendUint(nil, math.MaxUint64)); got != strconv.FormatUint(math.MaxUint64, 10) {
		t.Fatal(got)
	}
}

// TestPageFormat: a page is a JSON array of arrays, one per record, its
// values in the order of columns; the reader reads back what the writer
// wrote; a page is cut at pageRecords records or once past pageBytes.
func TestPageFormat(t *testing.T) {
	rs := script()
	rs[2].Cause = "refused"
	rs[3].Estimated = true
	var w pageWriter
	page, n, lo, hi := w.appendPage(nil, rs)
	if n != len(rs) || lo != rs[0].Start || hi != rs[len(rs)-1].Start {
		t.Fatalf("n %d, ts %d..%d", n, lo, hi)
	}
	var raw [][]any
	if err := json.Unmarshal(page, &raw); err != nil || len(raw) != len(rs) || len(raw[0]) != numColumns {
		t.Fatalf("%v: %s", err, page)
	}
	if raw[0][2] != "alice" || raw[0][10] != float64(200) || raw[3][17] != float64(1) {
		t.Fatalf("values out of place: %v", raw[0])
	}
	var got []Entry
	var fs fields
	if err := eachRecord(page, &fs, func(_ int, _ []byte, f *fields) bool {
		var e Entry
		f.entry(&e, nil)
		got = append(got, e)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if want := entryOf(&rs[i]); !reflect.DeepEqual(got[i], want) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want)
		}
	}
	// Bounds.
	many := benchRecords(pageRecords + 10)
	if _, n, _, _ := w.appendPage(nil, many); n != pageRecords {
		t.Fatalf("a page of %d records", n)
	}
	big := make([]Record, 200)
	for i := range big {
		big[i] = rec(day0, "b", strings.Repeat("\x01", maxText), "p", "m", "m", 200, 1, 1, 0, false)
	}
	page, n, _, _ = w.appendPage(nil, big)
	if n >= len(big) || len(page) > pageBytes+maxRecordBytes+2 || len(page) < pageBytes {
		t.Fatalf("a page of big records: %d records, %d bytes", n, len(page))
	}
	// A reader tolerates whitespace; a broken page is an error.
	fs = fields{}
	if err := eachRecord([]byte(` [ [1, "a" ,2] ] `), &fs, func(int, []byte, *fields) bool { return true }); err == nil {
		t.Fatal("a record of 3 values was read")
	}
	for _, bad := range []string{``, `x`, `[[1,"a]`, `[1]`} {
		if err := eachRecord([]byte(bad), &fs, func(int, []byte, *fields) bool { return true }); err == nil {
			t.Fatalf("%q read as a page", bad)
		}
	}
	if err := eachRecord([]byte(`[]`), &fs, func(int, []byte, *fields) bool { t.Fatal("a record in []"); return true }); err != nil {
		t.Fatal(err)
	}
}

// TestHostileNames: names with quotes, backslashes, control bytes,
// invalid UTF-8 and 10 KB of length are stored cut and repaired exactly
// as before pages, and each stays one value of its page: the API and the
// usage_records view read them back.
func TestHostileNames(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	ctx := t.Context()
	hostile := []string{
		`"],[1,"injected`,
		`\`,
		`a\"b\\c"`,
		"\x00\x01\x02\x1f\n\r\t\x7f",
		"bad\xff\xfe\x00\xffutf8\xc3",
		strings.Repeat(`"\`, 5<<10), // 10 KB
		strings.Repeat("😀", 2600),   // 10 KB, cut inside a character
		strings.Repeat("\xff", 10<<10),
	}
	var rs []Record
	for i, h := range hostile {
		r := rec(day0.Add(time.Duration(i)*time.Second), h, h, h, h, h, 200, 1, 1, 0, false)
		r.Credential, r.ClientDialect, r.UpstreamDialect, r.Cause = h, h, h, h
		r.Guardrails.Set([]byte(h))
		rs = append(rs, r)
	}
	if err := d.Insert(ctx, rs); err != nil {
		t.Fatal(err)
	}
	es, err := d.Range(ctx, time.Time{}, time.Time{}, -1)
	if err != nil || len(es) != len(rs) {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	for i, h := range hostile {
		e := es[i]
		name, text, id := storedText(h, MaxName), storedText(h, maxText), storedText(h, MaxID)
		got := []string{e.ID, e.Key, e.Provider, e.Credential, e.Model, e.UpstreamModel, e.ClientDialect, e.UpstreamDialect, e.Cause, e.Guardrails}
		want := []string{id, text, text, text, name, name, text, text, text, name}
		if !slices.Equal(got, want) {
			t.Fatalf("name %d:\n got %q\nwant %q", i, got, want)
		}
		var key, model, guard string
		var status int
		if err := d.db.QueryRowContext(ctx, "SELECT key_name, model, guardrails, status FROM usage_records WHERE ts = ?", rs[i].Start).Scan(&key, &model, &guard, &status); err != nil {
			t.Fatal(err)
		}
		if key != text || model != name || guard != name || status != 200 {
			t.Fatalf("view, name %d: %q %q %q %d", i, key, model, guard, status)
		}
	}
}

// TestUpgradeV2: a version 2 SQLite ledger with rows (several pages'
// worth, awkward names among them) becomes version 3: every record is
// read back through the API as it was written, in the same order, and
// through the usage_records view with its old columns; new records join
// them.
func TestUpgradeV2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "usage.db")
	d, err := OpenLazy(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// A version 2 database, its rows written as version 2 wrote them.
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_us BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := d.apply(ctx, tx, &migrations[i]); err != nil {
			t.Fatal(err)
		}
	}
	const n = 1300 // three pages of the migration's 512
	rs := make([]Record, n)
	names := []string{"alice", `q"uo\te`, "ctl\x01\n\t\x1f", "é€😀", ""}
	for i := range rs {
		at := day0.Add(time.Duration(i%97) * time.Minute) // not in order of id; equal times
		nm := names[i%len(names)]
		rs[i] = rec(at, fmt.Sprintf("v2-%04d", i), nm, "p"+nm, "m"+nm, "u"+nm, int32(200+i%3*100), int64(i), int64(2*i), int64(i)*1000, i%2 == 0)
		rs[i].Cause = nm
		rs[i].Estimated, rs[i].APIEquivalent = i%3 == 0, i%5 == 0
		rs[i].Guardrails.Set([]byte(nm))
	}
	ins := d.insertSQL(1)
	for i := range rs {
		if _, err := tx.ExecContext(ctx, ins, recordArgs(nil, &rs[i])...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Upgrade, read through the API.
	if err := d.ensureSchema(ctx); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := d.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM usage_pages").Scan(&pages); err != nil || pages != 3 {
		t.Fatalf("%d pages, %v", pages, err)
	}
	if c, err := d.Count(ctx); err != nil || c != n {
		t.Fatalf("count %d, %v", c, err)
	}
	want := referenceOrder(rs)
	es, err := d.Range(ctx, time.Time{}, time.Time{}, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n {
		t.Fatalf("%d entries", len(es))
	}
	for i := range es {
		if w := entryOf(&rs[want[i]]); !reflect.DeepEqual(es[i], w) {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, es[i], w)
		}
	}
	latest, err := d.Latest(ctx, 10)
	if err != nil || len(latest) != 10 {
		t.Fatalf("latest: %d, %v", len(latest), err)
	}
	for i := range latest {
		if w := rs[want[n-1-i]].ID.String(); latest[i].ID != w {
			t.Fatalf("latest %d is %s, want %s", i, latest[i].ID, w)
		}
	}
	got, err := d.Totals(ctx, ByKey, time.Time{}, time.Time{})
	if err != nil || !reflect.DeepEqual(got, expectTotals(rs, ByKey, time.UnixMicro(-1<<62), time.UnixMicro(1<<62))) {
		t.Fatalf("totals %+v, %v", got, err)
	}
	// Through the view: the old columns, every record, in the old order.
	rows, err := d.db.QueryContext(ctx, "SELECT "+columns+" FROM usage_records ORDER BY ts, id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			t.Fatal(err)
		}
		if w := entryOf(&rs[want[i]]); !reflect.DeepEqual(e, w) {
			t.Fatalf("view row %d:\n got %+v\nwant %+v", i, e, w)
		}
		i++
	}
	if err := rows.Err(); err != nil || i != n {
		t.Fatalf("view: %d rows, %v", i, err)
	}
	var sum int64
	if err := d.db.QueryRowContext(ctx, "SELECT SUM(cost_nano_usd) FROM usage_records WHERE key_name = 'alice'").Scan(&sum); err != nil || sum == 0 {
		t.Fatalf("an operator's sum: %d, %v", sum, err)
	}
	// New records join the old ones.
	more := script()
	if err := d.Insert(ctx, more); err != nil {
		t.Fatal(err)
	}
	var viewed int64
	if err := d.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM usage_records").Scan(&viewed); err != nil || viewed != n+int64(len(more)) {
		t.Fatalf("view after a write: %d, %v", viewed, err)
	}
}

// referenceOrder is the indexes of rs in the order (ts, id) of rows
// inserted in the order of rs.
func referenceOrder(rs []Record) []int {
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case rs[a].Start < rs[b].Start:
			return -1
		case rs[a].Start > rs[b].Start:
			return 1
		}
		return 0
	})
	return idx
}

// overlapping is records written in batches of varied sizes, each batch
// in finish order rather than arrival order, so that pages' ts ranges
// overlap; many share a time with records of other pages.
func overlapping() (rs []Record, batches [][]Record) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "b", "c"}
	i := 0
	for _, size := range []int{1, 7, 600, 3, 1100, 40, 2, 300} {
		var batch []Record
		for range size {
			at := day0.Add(time.Duration(rng.IntN(400)) * time.Second)
			r := rec(at, fmt.Sprintf("o-%05d", i), keys[i%3], "p", "m", "m", 200, int64(i), 1, 1, true)
			batch = append(batch, r)
			i++
		}
		rs = append(rs, batch...)
		batches = append(batches, batch)
	}
	return rs, batches
}

// TestPagesOverlap: Range, Latest and Totals over pages whose ts ranges
// overlap give what the row table gives (ORDER BY ts, id; ts DESC, id
// DESC), on both databases.
func TestPagesOverlap(t *testing.T) { backends(t, testPagesOverlap) }

func testPagesOverlap(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	rs, batches := overlapping()
	for _, b := range batches {
		if err := d.Insert(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	order := referenceOrder(rs)
	ids := func(es []Entry) []string {
		var s []string
		for _, e := range es {
			s = append(s, e.ID)
		}
		return s
	}
	sec := func(s int) time.Time { return day0.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct{ from, to, limit int }{
		{0, 400, -1}, {0, 400, 5}, {100, 101, 1000}, {37, 250, 17}, {399, 400, 3}, {150, 150, 10}, {0, 400, 0}, {200, 300, 600},
	} {
		var want []string
		for _, i := range order {
			if ts := rs[i].Start; ts >= sec(c.from).UnixMicro() && ts < sec(c.to).UnixMicro() && (c.limit < 0 || len(want) < c.limit) {
				want = append(want, rs[i].ID.String())
			}
		}
		limit := c.limit
		if limit < 0 {
			if d.Postgres() {
				limit = len(rs) // PostgreSQL takes no negative LIMIT
			}
		}
		es, err := d.Range(ctx, sec(c.from), sec(c.to), limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(es); !slices.Equal(got, want) {
			t.Fatalf("Range(%d, %d, %d):\n got %v\nwant %v", c.from, c.to, c.limit, got, want)
		}
		for _, g := range []Group{ByKey, ByDay} {
			got, err := d.Totals(ctx, g, sec(c.from), sec(c.to))
			if err != nil {
				t.Fatal(err)
			}
			if w := expectTotals(rs, g, sec(c.from), sec(c.to)); !reflect.DeepEqual(got, w) && len(got)+len(w) > 0 {
				t.Fatalf("Totals by %s over %d..%d:\n got %+v\nwant %+v", g, c.from, c.to, got, w)
			}
		}
	}
	for _, n := range []int{1, 2, 50, 700, len(rs), len(rs) + 5} {
		var want []string
		for k := len(order) - 1; k >= 0 && len(want) < n; k-- {
			want = append(want, rs[order[k]].ID.String())
		}
		es, err := d.Latest(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(es); !slices.Equal(got, want) {
			t.Fatalf("Latest(%d):\n got %v\nwant %v", n, got, want)
		}
	}
}

// TestPruneStraddle: pruning deletes the pages wholly before the cutoff
// and rewrites the ones that straddle it without their older records;
// the count is exact, and what is left reads as before, in its order.
func TestPruneStraddle(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	ctx := t.Context()
	rs, batches := overlapping()
	cut := day0.Add(200 * time.Second)
	edge := []Record{ // a microsecond either side of the cutoff
		rec(cut.Add(-time.Microsecond), "edge-1", "k", "p", "m", "m", 200, 1, 1, 0, false),
		rec(cut, "edge-2", "k", "p", "m", "m", 200, 1, 1, 0, false),
		rec(cut.Add(-time.Microsecond), "edge-3", "k", "p", "m", "m", 200, 1, 1, 0, false),
	}
	rs, batches = append(rs, edge...), append(batches, edge)
	for _, b := range batches {
		if err := d.Insert(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	pagesBefore := pageCount(t, d)
	var kept []Record
	for _, r := range rs {
		if r.Start >= cut.UnixMicro() {
			kept = append(kept, r)
		}
	}
	n, err := d.Prune(ctx, cut)
	if err != nil || n != int64(len(rs)-len(kept)) {
		t.Fatalf("Prune: %d, %v; want %d", n, err, len(rs)-len(kept))
	}
	var straddling int
	if err := d.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM usage_pages WHERE ts_min < ?", cut.UnixMicro()).Scan(&straddling); err != nil || straddling != 0 {
		t.Fatalf("%d pages still hold records before the cutoff, %v", straddling, err)
	}
	if p := pageCount(t, d); p == 0 || p > pagesBefore {
		t.Fatalf("%d pages after the prune, %d before", p, pagesBefore)
	}
	var sumN int64
	if err := d.db.QueryRowContext(ctx, "SELECT SUM(n) FROM usage_pages WHERE n = json_array_length(records)").Scan(&sumN); err != nil || sumN != int64(len(kept)) {
		t.Fatalf("pages' n: %d, %v", sumN, err)
	}
	es, err := d.Range(ctx, time.Time{}, time.Time{}, -1)
	if err != nil {
		t.Fatal(err)
	}
	order := referenceOrder(kept)
	if len(es) != len(kept) {
		t.Fatalf("%d left, want %d", len(es), len(kept))
	}
	for i, k := range order {
		if es[i].ID != kept[k].ID.String() {
			t.Fatalf("left %d: %s, want %s", i, es[i].ID, kept[k].ID.String())
		}
	}
	if n, err := d.Prune(ctx, cut); err != nil || n != 0 {
		t.Fatalf("again: %d, %v", n, err)
	}
	if n, err := d.Prune(ctx, day0.Add(time.Hour)); err != nil || n != int64(len(kept)) || pageCount(t, d) != 0 {
		t.Fatalf("all: %d, %v, %d pages", n, err, pageCount(t, d))
	}
}

func pageCount(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.db.QueryRow("SELECT COUNT(*) FROM usage_pages").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTies: pages read in order of their ts bounds still give the row
// table's order among records of one time: by id, that is by page and
// place. Latest's page with the same time and a later id comes after the
// one read first; so does Range's page with an earlier id and a later
// ts_min.
func TestTies(t *testing.T) { backends(t, testTies) }

func testTies(t *testing.T, database string) {
	d := open(t, database)
	ctx := context.Background()
	at := func(s int, id string) Record {
		return rec(day0.Add(time.Duration(s)*time.Second), id, "k", "p", "m", "m", 200, 1, 1, 0, false)
	}
	for _, batch := range [][]Record{
		{at(20, "r1")}, {at(1, "r2"), at(20, "r3")}, // Range
		{at(1010, "l1"), at(1005, "l2")}, {at(1005, "l3")}, // Latest
	} {
		if err := d.Insert(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	es, err := d.Range(ctx, day0, day0.Add(50*time.Second), 2)
	if err != nil || len(es) != 2 || es[0].ID != "r2" || es[1].ID != "r1" {
		t.Fatalf("Range: %+v, %v", es, err)
	}
	es, err = d.Latest(ctx, 2)
	if err != nil || len(es) != 2 || es[0].ID != "l1" || es[1].ID != "l3" {
		t.Fatalf("Latest: %+v, %v", es, err)
	}
}
