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

// run is the writer: it gathers records into a batch and writes it when
// full or every Interval, retrying a failed write (the batch is kept and
// the queue absorbs what arrives meanwhile), and prunes old records.
func (l *Ledger) run() {
	defer close(l.done)
	batch := make([]Record, 0, l.o.BatchSize)
	tick := time.NewTicker(l.o.Interval)
	defer tick.Stop()
	var nextPrune time.Time // zero: prune at the first tick
	for {
		select {
		case r := <-l.q:
			batch = append(batch, r)
			if len(batch) < cap(batch) {
				continue
			}
		case <-tick.C:
			l.prune(&nextPrune)
		case <-l.stop:
			l.finish(batch)
			return
		}
		if !l.flush(batch) {
			l.finish(batch)
			return
		}
		batch = batch[:0]
	}
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
		batch = batch[:l.fill(batch)]
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

// fill tops batch up from the queue without waiting, and returns its
// length.
func (l *Ledger) fill(batch []Record) int {
	for len(batch) < cap(batch) {
		select {
		case r := <-l.q:
			batch = append(batch, r)
		default:
			return len(batch)
		}
	}
	return len(batch)
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
	n := 0
	for {
		select {
		case r := <-l.q:
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
