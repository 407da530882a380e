package ledger

import (
	"context"
	"time"
)

// writeTimeout bounds one batch's write.
const writeTimeout = 30 * time.Second

// pruneEvery is how often retention runs.
const pruneEvery = time.Hour

// Backoff between attempts at a batch the database refused.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// run is the writer: it sleeps until a record is queued, gathers a batch
// until it is full or Interval has passed since the batch began, writes
// it (retrying a failed write: the batch is kept and the queue absorbs
// what arrives meanwhile), and prunes old records after a write once
// pruning is due. An idle ledger does nothing: no timer runs while the
// queue is empty, and a lazily opened database is not touched before the
// first record. It drops its batch when nothing more is queued, so that
// a resting ledger holds no records (a batch is made again to the size
// of what is queued).
func (l *Ledger) run() {
	defer close(l.done)
	select {
	case <-l.ready:
	case <-l.stop:
		select {
		case <-l.ready: // added to just before Close: finish writes it
		default:
			return // nothing was ever added
		}
	}
	var batch []Record
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var nextPrune time.Time // zero: prune after the first write
	for {
		if !l.waitFirst() || !l.gather(timer) {
			l.finish(batch[:0])
			return
		}
		batch = l.fill(batch[:0])
		l.pending.Add(-int64(len(batch)))
		if !l.flush(batch) {
			l.finish(batch)
			return
		}
		l.prune(&nextPrune)
		if l.pending.Load() == 0 {
			batch = nil
		}
	}
}

// waitFirst returns at once when records are queued; else it marks the
// writer idle and sleeps until an Add wakes it. It reports false when the
// ledger is closing. Add increments pending and then reads idle; this
// sets idle and then reads pending: whichever runs second sees the
// other's write, so a record is never left without a wake-up.
func (l *Ledger) waitFirst() bool {
	for l.pending.Load() == 0 {
		l.idle.Store(true)
		if l.pending.Load() > 0 {
			if l.idle.CompareAndSwap(true, false) {
				break
			}
			// an Add took the flag: its token is on wake
		}
		select {
		case <-l.wake:
			l.wakes.Add(1)
		case <-l.stop:
			return false
		}
	}
	l.idle.Store(false)
	return true
}

// gather waits until the queue holds a batch or Interval has passed,
// and reports false when the ledger is closing.
func (l *Ledger) gather(timer *time.Timer) bool {
	if l.pending.Load() >= int64(l.o.BatchSize) {
		select {
		case <-l.stop:
			return false // finish writes what is queued
		default:
			return true
		}
	}
	timer.Reset(l.o.Interval)
	defer timer.Stop()
	for l.pending.Load() < int64(l.o.BatchSize) {
		select {
		case <-timer.C:
			return true
		case <-l.full:
		case <-l.wake: // a stale token of an earlier batch
		case <-l.stop:
			return false
		}
	}
	return true
}

// flush writes batch, retrying with backoff until it is written (true) or
// the ledger is closing (false: batch is still to be written).
func (l *Ledger) flush(batch []Record) bool {
	if len(batch) == 0 {
		return true
	}
	wait := minBackoff
	for failures := 0; ; failures++ {
		err := l.write(context.Background(), batch)
		if err == nil {
			if failures > 0 {
				l.logf("usage ledger: writing to %s again after %d failed attempt(s)", l.db, failures)
			}
			return true
		}
		if failures == 0 {
			l.logf("usage ledger: cannot write %d record(s) to %s: %v; retrying (while it fails, records past the queue's %d are dropped and counted in slipstream_ledger_records_total{result=\"dropped\"})", len(batch), l.db, err, l.o.QueueSize)
		}
		select {
		case <-l.stop:
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// write writes batch in one transaction and counts it.
func (l *Ledger) write(ctx context.Context, batch []Record) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	if err := l.db.Insert(ctx, batch); err != nil {
		if l.o.Counters != nil {
			l.o.Counters.FailedBatch()
		}
		return err
	}
	l.written.Add(int64(len(batch)))
	if l.o.Counters != nil {
		l.o.Counters.Written(len(batch))
	}
	return nil
}

// finish writes batch and what is left in the queue as Close ends,
// retrying until Close's context ends; what could not be written is
// counted as dropped.
func (l *Ledger) finish(batch []Record) {
	ctx := l.final
	for {
		batch = l.fill(batch)
		if len(batch) == 0 {
			return
		}
		if !l.writeBefore(ctx, batch) {
			l.drop(len(batch) + l.drain(nil))
			return
		}
		batch = batch[:0]
	}
}

// fill tops batch up to BatchSize records from the queue without
// waiting, and returns it. A nil batch is made to the size of what is
// queued.
func (l *Ledger) fill(batch []Record) []Record {
	p := l.q.Load()
	if p == nil {
		return batch // trimmed: nothing was queued
	}
	q := *p
	if batch == nil {
		batch = make([]Record, 0, min(max(len(q), 1), l.o.BatchSize))
	}
	for len(batch) < l.o.BatchSize {
		select {
		case r := <-q:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// writeBefore writes batch, retrying with backoff until ctx ends.
func (l *Ledger) writeBefore(ctx context.Context, batch []Record) bool {
	wait := minBackoff
	for {
		err := l.write(ctx, batch)
		if err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			l.logf("usage ledger: %d record(s) not written to %s at shutdown: %v", len(batch), l.db, err)
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// drain empties the queue, counting the records (and calling f on each,
// when not nil).
func (l *Ledger) drain(f func(*Record)) int {
	p := l.q.Load()
	if p == nil {
		return 0
	}
	q := *p
	n := 0
	for {
		select {
		case r := <-q:
			if f != nil {
				f(&r)
			}
			n++
		default:
			return n
		}
	}
}

// prune deletes records past the retention, at most once per pruneEvery.
func (l *Ledger) prune(next *time.Time) {
	now := l.o.Now()
	if l.o.Retention < 0 || now.Before(*next) {
		return
	}
	*next = now.Add(pruneEvery)
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if _, err := l.db.Prune(ctx, now.Add(-l.o.Retention)); err != nil {
		l.logf("usage ledger: cannot delete records older than %s from %s: %v", l.o.Retention, l.db, err)
	}
}

func (l *Ledger) logf(format string, args ...any) {
	if l.o.Log != nil {
		l.o.Log.Printf(format, args...)
	}
}
