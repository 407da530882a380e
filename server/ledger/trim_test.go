package ledger

import (
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestTrimRace: Adds from many goroutines while Trim takes the queue
// away over and over. Every record is written: none is sent into a queue
// that Trim retired and then lost. Run with -race, it also checks the
// hand-over between Add, Trim and the writer.
func TestTrimRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.db")
	d := open(t, path)
	const adders, each = 8, 500
	l := Start(d, Options{QueueSize: adders * each, BatchSize: 64, Interval: time.Millisecond, Retention: -1})
	stop := make(chan struct{})
	trimmed := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				trimmed <- n
				return
			default:
				had := l.q.Load() != nil
				l.Trim()
				if had && l.q.Load() == nil {
					n++
				}
				runtime.Gosched()
			}
		}
	}()
	var wg sync.WaitGroup
	for a := range adders {
		wg.Go(func() {
			for i := range each {
				r := Record{Key: "k", Input: int64(a*each + i)}
				l.Add(&r)
				if i%20 == 0 && !drained(l) { // so that Trim finds the queue empty now and then
					t.Errorf("the queue did not drain in 2 s: %+v", l.Stats())
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	n := <-trimmed
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	if s.Added != adders*each || s.Written != s.Added || s.Dropped != 0 {
		t.Fatalf("stats %+v, want all %d written", s, adders*each)
	}
	if got := count(t.Context(), open(t, path)); got != adders*each {
		t.Fatalf("the database holds %d records, want %d", got, adders*each)
	}
	if n == 0 {
		t.Fatal("Trim never retired the queue: the race was not exercised")
	}
	t.Logf("the queue was retired %d times", n)
}

// TestTrimFreesRecords: once its records are written, a ledger holds
// neither its batch (dropped by the writer) nor, after Trim, its queue;
// the next Add makes a queue again and is written.
func TestTrimFreesRecords(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	const size = 4096 // records: 2.2 MB of queue, as much of batch
	base := heapAfterGC()
	l := Start(d, Options{QueueSize: size, BatchSize: size, Interval: 10 * time.Millisecond, Retention: -1})
	defer l.Close(t.Context())
	for i := range size {
		r := Record{Key: "k", Input: int64(i)}
		l.Add(&r)
	}
	waitWritten(t, l, size)
	held := heapAfterGC()
	l.Trim()
	trimmed := heapAfterGC()
	queue := int64(size * reflect.TypeFor[Record]().Size())
	if got := held - trimmed; got < queue*9/10 {
		t.Fatalf("Trim freed %d bytes, want the queue's %d", got, queue)
	}
	if got := trimmed - base; got > queue/4 {
		t.Fatalf("a trimmed ledger holds %d bytes more than none, want under %d: the writer kept its batch", got, queue/4)
	}
	r := Record{Key: "after"}
	l.Add(&r)
	waitWritten(t, l, size+1)
}

// TestTrimKeepsQueued: Trim leaves a queue that holds records.
func TestTrimKeepsQueued(t *testing.T) {
	d := open(t, filepath.Join(t.TempDir(), "usage.db"))
	l := Start(d, Options{Interval: time.Hour, BatchSize: 16, Retention: -1})
	r := Record{Key: "k"}
	l.Add(&r)
	l.Trim()
	if l.q.Load() == nil || l.Stats().Queued != 1 {
		t.Fatalf("Trim took a queue that holds a record: %+v", l.Stats())
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Written != 1 {
		t.Fatalf("stats %+v, want the record written", s)
	}
}

// drained waits until nothing is queued or on its way in, and reports
// whether that happened within 2 s (a lost record never leaves pending).
func drained(l *Ledger) bool {
	deadline := time.Now().Add(2 * time.Second)
	for l.pending.Load() != 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

// waitWritten waits until n records are written and the writer sleeps
// again (it drops its batch before it does).
func waitWritten(t *testing.T, l *Ledger, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().Written < n || !l.idle.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %+v, want %d written and the writer idle", l.Stats(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
