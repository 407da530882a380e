package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"slipstream/internal/pgtest"
)

// TestOutage: PostgreSQL stops while records flow. Add never blocks; the
// batch in hand is retried; past the queue's bound records are dropped
// and counted; once the server is back every record is written or
// counted, and the database holds exactly the written ones.
func TestOutage(t *testing.T) {
	pg := pgtest.Start(t)
	d := open(t, pg.URL())
	c := &countersT{}
	const queue, batch = 32, 8
	l := Start(d, Options{QueueSize: queue, BatchSize: batch, Interval: 5 * time.Millisecond, Counters: c, Retention: -1})
	r := rec(day0, "o", "k", "p", "m", "m", 200, 1, 1, 0, false)
	add := func(n int) {
		for range n {
			start := time.Now()
			l.Add(&r)
			if d := time.Since(start); d > time.Second { // a scheduling hiccup, never a wait for the database
				t.Fatalf("Add blocked for %s", d)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	add(100)
	// A writer starved of CPU (the suite runs beside others) may let the
	// small queue overflow even now: what is not written is counted.
	waitFor(t, func() bool { st := l.Stats(); return st.Written+st.Dropped == 100 })
	healthy := l.Stats()
	pg.Stop()
	add(500) // the database is down: at most queue+batch of these survive
	waitFor(t, func() bool { return c.failed.Load() > 0 })
	if st := l.Stats(); st.Dropped-healthy.Dropped < 500-queue-batch-1 {
		t.Fatalf("during the outage: %+v, want at least %d more dropped than %+v", st, 500-queue-batch-1, healthy)
	}
	pg.Restart(t)
	waitFor(t, func() bool { st := l.Stats(); return st.Written+st.Dropped == 600 })
	before := l.Stats()
	if before.Written <= healthy.Written {
		t.Fatalf("nothing held through the outage was written: %+v, before it %+v", before, healthy)
	}
	add(50) // the database is back: these are written (or, starved, counted)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st := l.Stats()
	// Unless the writer was starved before the outage, all 50 are written.
	if st.Added != 650 || st.Written+st.Dropped != 650 || st.Written <= before.Written || healthy.Dropped == 0 && st.Written != before.Written+50 {
		t.Fatalf("after the outage: %+v", st)
	}
	if c.dropped.Load() != st.Dropped || c.written.Load() != st.Written {
		t.Fatalf("counters %d written, %d dropped; stats %+v", c.written.Load(), c.dropped.Load(), st)
	}
	d2 := open(t, pg.URL())
	if n, err := d2.Count(ctx); err != nil || n != st.Written {
		t.Fatalf("rows %d (%v), written %d", n, err, st.Written)
	}
}

// TestSQLiteFile: the file and its directory are created on first use,
// readable by the owner only.
func TestSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "usage.db")
	open(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v", fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("dir: %v, %v", di, err)
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "x?y.db")); err == nil {
		t.Fatal("a path with ? was accepted")
	}
}

// TestDescribe: a PostgreSQL URL is never described with its password.
func TestDescribe(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Describe(in); got != want {
			t.Fatalf("Describe(%q) = %q, want %q", in, got, want)
		}
	}
	f("/var/lib/slipstream/usage.db", "/var/lib/slipstream/usage.db")
	f("postgres://u:hunter2@db:5432/ledger", "postgres://u:xxxxx@db:5432/ledger")
	f("postgresql://u@db/ledger?sslmode=require&password=hunter2", "postgresql://u@db/ledger?password=xxxxx&sslmode=require")
	f("postgres://u:hun%zzter2@db/x", "postgres://(a URL that does not parse)")
}

// TestCloseRightAfterAdd: a record added just before Close is written,
// even when the writer had not yet run when Close came (it then found
// both the first record and the stop signal, and used to take the stop
// for a ledger that never had a record).
func TestCloseRightAfterAdd(t *testing.T) {
	for i := range 30 {
		d := open(t, filepath.Join(t.TempDir(), fmt.Sprintf("usage%d.db", i)))
		l := Start(d, Options{Interval: time.Hour, Retention: -1})
		r := Record{Key: "k"}
		l.Add(&r)
		if err := l.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if s := l.Stats(); s.Written != 1 || s.Dropped != 0 {
			t.Fatalf("round %d: %+v, want the record written", i, s)
		}
	}
}
