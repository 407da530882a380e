// Package ledger is slipstream's usage ledger: one Record per finished
// request, queued by the request path without blocking or allocating, and
// written in batches by one goroutine to an SQLite file or a PostgreSQL
// database (DB), which also answers the queries of `slipstream usage` and
// the management API. Old records are pruned in the background.
//
// The request path pays one channel send (Add) and an atomic add; it wakes
// the writer only when a batch starts or fills, not per record (a wake-up
// per request cost more CPU than the request). A full queue drops the
// record and counts it. A database that goes away is retried while the
// queue absorbs what it can; every record ends up written or counted as
// dropped.
//
// Memory: the queue is made by the first Add and given back by Trim once
// everything queued is taken; the writer holds a batch only while it has
// records. A resting ledger keeps no record buffers.
package ledger

import (
	"context"
	"log"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune a Ledger. The zero value works.
type Options struct {
	// QueueSize is how many records wait for the writer at most; a
	// record added to a full queue is dropped. Default 2048.
	QueueSize int
	// BatchSize is the most records one write carries. Default 1024.
	BatchSize int
	// Interval is the longest a record waits in the queue before it is
	// written (a full batch is written at once). Default 1s.
	Interval time.Duration
	// Retention is how long records are kept; older ones are deleted at
	// start and every hour. Default 90 days; negative: kept forever.
	Retention time.Duration
	// Counters count written and dropped records and failed writes.
	// Default: none.
	Counters Counters
	// Log receives the writer's errors. Default: discarded.
	Log *log.Logger
	// Now is the clock of retention. Default time.Now.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultQueueSize = 2048
	DefaultBatchSize = 1024
	DefaultInterval  = time.Second
	DefaultRetention = 90 * 24 * time.Hour
)

// Counters receive the ledger's counts (server/metrics implements them).
// Dropped is called on the request path: it must not block or allocate.
type Counters interface {
	Written(n int)
	Dropped(n int)
	FailedBatch()
}

// Ledger queues records and writes them to a DB. Create it with Start;
// Add is safe for concurrent use.
type Ledger struct {
	db *DB
	o  Options

	// q is the queue, made by the first Add after Start or Trim (an idle
	// ledger holds no QueueSize records of memory); ready is closed by
	// the first. qmu serializes making the queue and retiring it.
	q     atomic.Pointer[chan Record]
	qmu   sync.Mutex
	made  bool // ready is closed (under qmu)
	ready chan struct{}

	stop    chan struct{}
	done    chan struct{}
	closing sync.Once
	closed  atomic.Bool
	final   context.Context // Close's context, set before stop is closed

	added, written, dropped atomic.Int64

	// The writer sleeps while nothing is queued (idle set) and is woken
	// by the Add that finds it so; while it gathers a batch it waits for
	// the interval or for full, which Add signals once the queue holds a
	// batch. pending counts records queued and not yet taken, and Adds
	// on their way into the queue; with idle it makes the hand-over
	// race-free (see waitFirst), and it tells Trim when the queue may go.
	idle    atomic.Bool
	pending atomic.Int64
	wake    chan struct{} // cap 1
	full    chan struct{} // cap 1
	wakes   atomic.Int64  // times the writer was woken from idle (tests)
}

// Start starts the ledger's writer over db, which the Ledger owns from
// now on (Close closes it).
func Start(db *DB, o Options) *Ledger {
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &Ledger{db: db, o: o, ready: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		wake: make(chan struct{}, 1), full: make(chan struct{}, 1)}
	go l.run()
	return l
}

// DB returns the ledger's database, for queries.
func (l *Ledger) DB() *DB { return l.db }

// Add queues a copy of r for the writer and returns at once. When the
// queue is full, or the ledger is closed, r is dropped and counted. It
// allocates nothing (but for the queue, after Start or Trim); r may be
// reused when it returns.
//
// It counts r in pending before it looks for the queue: Trim retires the
// queue only when it reads pending as zero after taking the queue away,
// so an Add that may hold the old queue is always seen (see Trim).
func (l *Ledger) Add(r *Record) {
	l.added.Add(1)
	if l.closed.Load() {
		l.drop(1)
		return
	}
	n := l.pending.Add(1)
	q := l.queue()
	select {
	case q <- *r:
	default:
		l.pending.Add(-1)
		l.drop(1)
		return
	}
	if l.idle.Load() && l.idle.CompareAndSwap(true, false) {
		signal(l.wake)
	} else if n >= int64(l.o.BatchSize) {
		signal(l.full)
	}
}

// signal leaves a token on c (cap 1) unless one is there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// queue returns the queue, made on first use.
func (l *Ledger) queue() chan Record {
	if q := l.q.Load(); q != nil {
		return *q
	}
	return l.makeQueue()
}

func (l *Ledger) makeQueue() chan Record {
	l.qmu.Lock()
	defer l.qmu.Unlock()
	if q := l.q.Load(); q != nil {
		return *q
	}
	q := make(chan Record, l.o.QueueSize)
	l.q.Store(&q)
	if !l.made {
		l.made = true
		close(l.ready)
	}
	return q
}

// Trim gives the queue's memory back when nothing is queued or on its
// way in; the next Add makes a new queue. The server calls it when it
// has rested long enough to return memory to the OS: a queue is
// QueueSize records whether it holds one or none.
//
// Trim takes the queue away and then reads pending; Add raises pending
// and then looks for the queue. Whichever comes second sees the other:
// an Add that may have found the old queue has raised pending, so Trim
// puts the queue back; an Add that comes after finds none and makes a
// new one (waiting on qmu until Trim is done).
func (l *Ledger) Trim() {
	l.qmu.Lock()
	defer l.qmu.Unlock()
	if q := l.q.Swap(nil); q != nil && l.pending.Load() != 0 {
		l.q.Store(q)
	}
}

// queued is how many records wait in the queue.
func (l *Ledger) queued() int {
	if q := l.q.Load(); q != nil {
		return len(*q)
	}
	return 0
}

func (l *Ledger) drop(n int) {
	l.dropped.Add(int64(n))
	if l.o.Counters != nil {
		l.o.Counters.Dropped(n)
	}
}

// Stats are a Ledger's counts since Start. Once Close has returned,
// Added == Written + Dropped.
type Stats struct {
	Added, Written, Dropped int64
	Queued                  int // waiting in the queue now
}

// Stats returns the ledger's counts.
func (l *Ledger) Stats() Stats {
	return Stats{Added: l.added.Load(), Written: l.written.Load(), Dropped: l.dropped.Load(), Queued: l.queued()}
}

// Close stops taking records, writes those queued (retrying a failing
// database until ctx ends: what is left then is counted as dropped), and
// closes the database. It may be called more than once.
func (l *Ledger) Close(ctx context.Context) error {
	var err error
	l.closing.Do(func() {
		l.closed.Store(true)
		l.final = ctx
		close(l.stop)
		<-l.done
		l.drop(l.drain(nil)) // records that raced with closed (none once the server stopped)
		err = l.db.Close()
	})
	return err
}
