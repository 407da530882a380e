package store

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Redis. With a redis URL the store's handles share their state across
// replicas; each keeps its local state too, which follows this replica's
// own traffic. With Redis up, a rate check is one round trip (a Lua
// script, so replicas cannot race between read and write) and a budget
// read one GET; everything learned after a response (tokens, budget use,
// usage totals, cooldowns) goes in the background through a bounded
// queue. With Redis down, checks use the local state at once for
// pauseOnError before Redis is tried again (limits become per-replica), a
// warning is logged every warnEvery at most, and nothing is refused
// because Redis is away.
//
// Every count reaches Redis once. Settlements are differences (used minus
// reserved), so Redis's totals are right only if each reservation and
// each settlement arrives exactly once, whatever the link did between
// them: a count made in local state because Redis was away is queued for
// Redis too, and the queue is kept, in order, through an outage rather
// than dropped. A count whose fate is unknown (sent, then timed out) is
// taken as arrived, since sending it again could count it twice; one
// that never left (the link paused, the connection refused) is sent when
// Redis is back. Only a full queue drops counts.
//
// The client is github.com/redis/rueidis: it pipelines concurrent
// commands over one connection by itself (no pool to size to the
// concurrency, as go-redis needs), runs Lua scripts by EVALSHA with a
// fallback, and reconnects on its own.

// Options configure Open.
type Options struct {
	URL    string // redis://, rediss:// or unix://
	Prefix string // starts every key; default "slipstream"
	Log    *log.Logger
	// OnError is called for every failed Redis operation (a metric).
	OnError func()
}

// Timings of the Redis link.
const (
	opTimeout    = 250 * time.Millisecond // one Redis operation
	pauseOnError = 2 * time.Second        // local state only, after a failure
	warnEvery    = 30 * time.Second       // outage warnings, at most
	queueLen     = 4096                   // background operations waiting
	flushTimeout = time.Second            // Close's sending of what is queued
	budgetTTL    = 40 * 24 * time.Hour    // a budget period's total outlives the month
)

const never = 1<<63 - 1

// Open returns a store whose state is shared through the Redis at o.URL.
// It connects in the background and returns at once: until the
// connection is up, every handle uses its local state.
func Open(o Options) (*Store, error) {
	if o.Prefix == "" {
		o.Prefix = "slipstream"
	}
	if o.Log == nil {
		o.Log = log.New(discard{}, "", 0)
	}
	if _, err := rueidis.ParseURL(o.URL); err != nil {
		return nil, fmt.Errorf("cannot use redis.url: %w", err)
	}
	r := &remote{o: o, replica: strconv.FormatInt(time.Now().UnixNano(), 36), queue: make(chan op, queueLen), stop: make(chan struct{}), sent: make(chan struct{})}
	r.downUntil.Store(never)
	s := New()
	s.remote = r
	r.wg.Add(1)
	go r.connect()
	go r.send()
	return s, nil
}

// Shared reports whether the store shares its state through Redis (up or
// not).
func (s *Store) Shared() bool { return s.remote != nil }

// Up reports whether Redis answers now (false without Redis).
func (s *Store) Up() bool { return s.remote != nil && s.remote.up() }

// Pending returns how many background writes wait for Redis (0 without
// Redis): during an outage, the backlog that will be sent when Redis is
// back, up to the queue's 4,096.
func (s *Store) Pending() int {
	if s.remote == nil {
		return 0
	}
	return len(s.remote.queue)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// remote is the Redis link of a Store.
type remote struct {
	o       Options
	replica string // this process's id, to skip its own broadcasts

	mu     sync.Mutex
	client rueidis.Client // nil until connected
	cools  []*Cooldowns   // appliers of broadcast cooldowns

	downUntil atomic.Int64 // unix nanos; local state only before it
	lastWarn  atomic.Int64
	dropped   atomic.Int64 // background operations dropped (queue full)
	lastDrop  atomic.Int64 // unix nanos of the last warning of a drop
	closing   atomic.Bool

	queue chan op
	stop  chan struct{}
	sent  chan struct{} // closed when send has returned
	wg    sync.WaitGroup
}

func (r *remote) up() bool { return r.conn() != nil }

// close sends what is queued (for at most flushTimeout), then closes the
// link.
func (r *remote) close() {
	if !r.closing.CompareAndSwap(false, true) {
		return
	}
	close(r.stop)
	<-r.sent
	r.mu.Lock()
	if r.client != nil {
		r.client.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// connect dials until it succeeds, then subscribes to the broadcasts.
func (r *remote) connect() {
	defer r.wg.Done()
	for {
		opt, _ := rueidis.ParseURL(r.o.URL)
		opt.DisableCache = true
		opt.ConnWriteTimeout = time.Second
		opt.Dialer.Timeout = time.Second
		c, err := rueidis.NewClient(opt)
		if err == nil {
			r.mu.Lock()
			r.client = c
			r.mu.Unlock()
			r.downUntil.Store(0)
			r.o.Log.Printf("redis: connected; key limits, budgets, cooldowns and usage totals are shared")
			r.subscribe(c)
			return
		}
		r.failed(err)
		select {
		case <-r.stop:
			return
		case <-time.After(pauseOnError):
		}
	}
}

// conn returns the client when Redis is believed up, else nil.
func (r *remote) conn() rueidis.Client {
	if time.Now().UnixNano() < r.downUntil.Load() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.client
}

// failed records a failed operation: local state only for a while, and
// the outage logged (at most every warnEvery).
func (r *remote) failed(err error) {
	now := time.Now().UnixNano()
	if d := r.downUntil.Load(); d != never && d < now+int64(pauseOnError) {
		r.downUntil.Store(now + int64(pauseOnError))
	}
	if r.o.OnError != nil {
		r.o.OnError()
	}
	if last := r.lastWarn.Load(); now-last >= int64(warnEvery) && r.lastWarn.CompareAndSwap(last, now) {
		r.o.Log.Printf("warning: redis is unreachable (%v); key limits, budgets and cooldowns are per replica until it is back", err)
	}
}

func (r *remote) key(parts ...string) string {
	k := r.o.Prefix
	for _, p := range parts {
		k += ":" + p
	}
	return k
}

// windowScript is Window's two-slot estimate run in Redis: KEYS current
// and previous slot, ARGV need, limit, covered fraction, slot TTL (ms), n.
// Returns {ok, cur, prev}; ok when the estimate plus need is within
// limit, and then n was counted in the current slot.
var windowScript = rueidis.NewLuaScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local prev = tonumber(redis.call('GET', KEYS[2]) or '0')
local need = tonumber(ARGV[1])
local n = tonumber(ARGV[5])
local est = math.floor(prev * tonumber(ARGV[3])) + cur
if est + need <= tonumber(ARGV[2]) then
  if n ~= 0 then
    redis.call('INCRBY', KEYS[1], n)
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
  end
  return {1, cur + n, prev}
end
return {0, cur, prev}
`)

func (r *remote) windowKeys(w *Window, slot int64) []string {
	return []string{r.key("win", w.name, strconv.FormatInt(slot, 10)), r.key("win", w.name, strconv.FormatInt(slot-1, 10))}
}

// take runs Window.take in Redis.
func (r *remote) take(w *Window, now time.Time, need, n, limit int64) (bool, time.Duration, error) {
	c := r.conn()
	if c == nil {
		return false, 0, errDown
	}
	slot := now.UnixNano() / int64(w.size)
	covered := 1 - float64(now.UnixNano()-slot*int64(w.size))/float64(w.size)
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	args := []string{strconv.FormatInt(need, 10), strconv.FormatInt(limit, 10), strconv.FormatFloat(covered, 'f', 6, 64), strconv.FormatInt(2*w.size.Milliseconds(), 10), strconv.FormatInt(n, 10)}
	vs, err := windowScript.Exec(ctx, c, r.windowKeys(w, slot), args).AsIntSlice()
	if err == nil && len(vs) != 3 {
		err = errShape
	}
	if err != nil {
		r.failed(err)
		return false, 0, err
	}
	if vs[0] == 1 {
		return true, 0, nil
	}
	return false, retryAfter(vs[2], vs[1], need, limit, covered, w.size), nil
}

// budgetScript is Budget.Reserve run in Redis: KEYS the period's total,
// ARGV n, limit, TTL (ms). Returns {ok, total}; when ok (the total was
// below limit), n was added.
var budgetScript = rueidis.NewLuaScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v < tonumber(ARGV[2]) then
  v = redis.call('INCRBY', KEYS[1], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {1, v}
end
return {0, v}
`)

// reserveBudget runs Budget.Reserve in Redis: it reports whether n was
// added to the period index's total, and the total.
func (r *remote) reserveBudget(b *Budget, index, n, limit int64) (bool, int64, error) {
	c := r.conn()
	if c == nil {
		return false, 0, errDown
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	args := []string{strconv.FormatInt(n, 10), strconv.FormatInt(limit, 10), strconv.FormatInt(budgetTTL.Milliseconds(), 10)}
	vs, err := budgetScript.Exec(ctx, c, []string{r.budgetKey(b, index)}, args).AsIntSlice()
	if err == nil && len(vs) != 2 {
		err = errShape
	}
	if err != nil {
		r.failed(err)
		return false, 0, err
	}
	return vs[0] == 1, vs[1], nil
}

// settleWindow replaces a reservation counted at at by the use counted
// at now, in the background like every count learned after a response.
// A reservation in a slot the window no longer covers is left alone.
func (r *remote) settleWindow(w *Window, at, now time.Time, reserved, used int64) {
	slotAt, slotNow := at.UnixNano()/int64(w.size), now.UnixNano()/int64(w.size)
	if slotAt == slotNow {
		used -= reserved
	} else if slotAt == slotNow-1 && reserved != 0 {
		r.later(op{kind: opIncr, key: r.windowKeys(w, slotAt)[0], n: -reserved, ttl: 2 * w.size})
	}
	if used != 0 {
		r.later(op{kind: opIncr, key: r.windowKeys(w, slotNow)[0], n: used, ttl: 2 * w.size})
	}
}

// settleBudget is settleWindow for a budget's periods.
func (r *remote) settleBudget(b *Budget, at, now time.Time, reserved, used int64) {
	iAt, iNow := b.period.index(at), b.period.index(now)
	if iAt == iNow {
		used -= reserved
	} else if reserved != 0 {
		r.later(op{kind: opIncr, key: r.budgetKey(b, iAt), n: -reserved, ttl: budgetTTL})
	}
	if used != 0 {
		r.later(op{kind: opIncr, key: r.budgetKey(b, iNow), n: used, ttl: budgetTTL})
	}
}

// budgetUsed reads the replicas' total of b's period index.
func (r *remote) budgetUsed(b *Budget, index int64) (int64, error) {
	c := r.conn()
	if c == nil {
		return 0, errDown
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	v, err := c.Do(ctx, c.B().Get().Key(r.budgetKey(b, index)).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	if err != nil {
		r.failed(err)
	}
	return v, err
}

func (r *remote) budgetKey(b *Budget, index int64) string {
	return r.key("budget", b.name, strconv.FormatInt(index, 10))
}

func (r *remote) addWindow(w *Window, now time.Time, n int64) {
	slot := now.UnixNano() / int64(w.size)
	r.later(op{kind: opIncr, key: r.windowKeys(w, slot)[0], n: n, ttl: 2 * w.size})
}

func (r *remote) addBudget(b *Budget, now time.Time, n int64) {
	r.later(op{kind: opIncr, key: r.budgetKey(b, b.period.index(now)), n: n, ttl: budgetTTL})
}

func (r *remote) addUsage(u *Usage, counts [5]int64) {
	k := r.key("usage", u.name)
	for i, n := range counts {
		if n > 0 {
			r.later(op{kind: opHincr, key: k, field: usageFields[i], n: n})
		}
	}
}

// usageFields name the totals of PREFIX:usage:KEY, in Usage's order.
var usageFields = [5]string{"input", "output", "cache_read", "cache_write", "reasoning"}

// op is one background operation.
type op struct {
	kind  opKind
	key   string
	field string
	n     int64
	ttl   time.Duration
	msg   string
}

type opKind uint8

const (
	opIncr opKind = iota
	opHincr
	opPublish
)

// later queues o for the background sender; when the queue is full it is
// dropped (the local state already has it), counted as an error and
// warned of.
func (r *remote) later(o op) {
	select {
	case r.queue <- o:
	default:
		n := r.dropped.Add(1)
		if r.o.OnError != nil {
			r.o.OnError()
		}
		now := time.Now().UnixNano()
		if last := r.lastDrop.Load(); now-last >= int64(warnEvery) && r.lastDrop.CompareAndSwap(last, now) {
			r.o.Log.Printf("warning: the redis write queue is full; %d writes dropped so far, so shared budgets and usage totals count less than was used", n)
		}
	}
}

// send runs queued operations in order. While the link is paused it
// holds the next one until Redis is tried again; once the store closes it
// sends what is left while Redis answers, for at most flushTimeout.
func (r *remote) send() {
	defer close(r.sent)
	for {
		select {
		case <-r.stop:
			r.flush()
			return
		case o := <-r.queue:
			if !r.deliver(&o) {
				r.flush()
				return
			}
		}
	}
}

// deliver runs o until it has reached Redis, or its fate is unknown (see
// sent). It reports false when the store closed first, with o unsent.
func (r *remote) deliver(o *op) bool {
	for {
		if c := r.conn(); c != nil {
			err := r.run(c, o)
			if err == nil {
				return true
			}
			r.failed(err)
			if sent(err) {
				return true
			}
		}
		wait := time.NewTimer(r.pauseLeft())
		select {
		case <-r.stop:
			wait.Stop()
			return false
		case <-wait.C:
		}
	}
}

// pauseLeft is how long until Redis is tried again: the rest of the pause
// after a failure, or pauseOnError while the first connection is made.
func (r *remote) pauseLeft() time.Duration {
	d := r.downUntil.Load()
	if d == never {
		return pauseOnError
	}
	return max(time.Duration(d-time.Now().UnixNano()), time.Millisecond)
}

// flush sends what is queued while Redis answers, for at most
// flushTimeout.
func (r *remote) flush() {
	deadline := time.Now().Add(flushTimeout)
	for time.Now().Before(deadline) {
		c := r.conn()
		if c == nil {
			return
		}
		select {
		case o := <-r.queue:
			if err := r.run(c, &o); err != nil {
				r.failed(err)
				return
			}
		default:
			return
		}
	}
}

// sent reports whether a failed operation may have reached Redis: every
// error but errDown and a refused or failed dial, which happen before
// anything is written.
func sent(err error) bool {
	if err == errDown || errors.Is(err, rueidis.ErrClosing) {
		return false
	}
	var oe *net.OpError
	return !errors.As(err, &oe) || oe.Op != "dial"
}

func (r *remote) run(c rueidis.Client, o *op) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	switch o.kind {
	case opIncr:
		return incrScript.Exec(ctx, c, []string{o.key}, []string{strconv.FormatInt(o.n, 10), strconv.FormatInt(o.ttl.Milliseconds(), 10)}).Error()
	case opHincr:
		return c.Do(ctx, c.B().Hincrby().Key(o.key).Field(o.field).Increment(o.n).Build()).Error()
	case opPublish:
		return c.Do(ctx, c.B().Publish().Channel(r.key("cooldowns")).Message(o.msg).Build()).Error()
	}
	return nil
}

var incrScript = rueidis.NewLuaScript(`local v = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return v`)

var (
	errDown  = errorString("redis is unreachable")
	errShape = errorString("unexpected reply from redis")
)

type errorString string

func (e errorString) Error() string { return string(e) }
