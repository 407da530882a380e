// Package store holds the state that client-key limits need: sliding
// rate windows, calendar budgets and usage totals, keyed by names (a key's or credential's configured name),
// never by pointers, so that the state survives a configuration reload for
// every name that still exists.
//
// One Store lives for the whole process. Without Redis everything is in
// the process: each operation is O(1), takes one short lock and allocates
// nothing. With Redis (see redis.go) the same handles share their state
// across replicas; when Redis is unreachable every handle falls back to
// its local state, with a warning, and traffic is never refused for it.
package store

import (
	"strings"
	"sync"
	"time"
)

// Store hands out the named state handles. Handles are created once per
// name and reused: call Window, Budget at configuration build time, not
// per request.
type Store struct {
	mu      sync.Mutex
	windows map[string]*Window
	budgets map[string]*Budget
	usage   map[string]*Usage

	remote *remote // nil without Redis
}

// New returns an in-process store.
func New() *Store {
	s := &Store{
		windows: map[string]*Window{},
		budgets: map[string]*Budget{},
		usage:   map[string]*Usage{},
	}
	return s
}

// Close stops the store's background work (Redis connections).
func (s *Store) Close() {
	if s.remote != nil {
		s.remote.close()
	}
}

// Window returns the sliding window named name, of the given size (e.g.
// one minute for rpm). The same name always returns the same window; a
// new size resets it.
func (s *Store) Window(name string, size time.Duration) *Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windows[name]
	if w == nil || w.size != size {
		w = &Window{name: strings.Clone(name), size: size, st: s}
		s.windows[w.name] = w
	}
	return w
}

// Budget returns the calendar budget counter named name for period p.
func (s *Store) Budget(name string, p Period) *Budget {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.budgets[name]
	if b == nil || b.period != p {
		b = &Budget{name: strings.Clone(name), period: p, st: s}
		s.budgets[b.name] = b
	}
	return b
}

// Usage returns the usage totals named name (a client key's name).
func (s *Store) Usage(name string) *Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usage[name]
	if u == nil {
		u = &Usage{name: strings.Clone(name), st: s}
		s.usage[u.name] = u
	}
	return u
}

// Window counts events in a sliding window: the current fixed slot plus
// the previous one weighted by how much of it the window still covers
// (the usual two-bucket estimate, exact at a slot's start and never more
// than one slot's traffic off).
type Window struct {
	name string
	size time.Duration
	st   *Store

	mu   sync.Mutex
	slot int64 // index of the current slot: unix nanos / size
	cur  int64
	prev int64
}

// Take counts n against limit at now: when the window's count plus n
// stays within limit it counts n and reports true; otherwise it counts
// nothing and reports how long until n would fit.
func (w *Window) Take(now time.Time, n, limit int64) (ok bool, retry time.Duration) {
	return w.take(now, n, n, limit)
}

// Below reports whether the window's count is below limit at now, and
// otherwise how long until it is. It counts nothing.
func (w *Window) Below(now time.Time, limit int64) (ok bool, retry time.Duration) {
	return w.take(now, 1, 0, limit)
}

// Reserve counts n at now when the window's count is below limit, in one
// step (one script with Redis: replicas cannot both pass on the last
// room), and reports true; otherwise it counts nothing and reports how
// long until the count is below limit. n may exceed what is left: a
// reservation is settled to the real use later (Settle).
func (w *Window) Reserve(now time.Time, n, limit int64) (ok bool, retry time.Duration) {
	return w.take(now, 1, n, limit)
}

// take counts n when the window's count plus need stays within limit.
func (w *Window) take(now time.Time, need, n, limit int64) (bool, time.Duration) {
	r := w.st.remote
	if r == nil {
		return w.takeHere(now, need, n, limit)
	}
	ok, retry, err := r.take(w, now, need, n, limit)
	if err == nil {
		w.add(now, n, ok) // mirror, for a later outage
		return ok, retry
	}
	ok, retry = w.takeHere(now, need, n, limit)
	if ok && n != 0 && !sent(err) {
		r.addWindow(w, now, n) // Redis gets it when it is back
	}
	return ok, retry
}

// takeHere is take in local state alone.
func (w *Window) takeHere(now time.Time, need, n, limit int64) (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roll(now)
	return w.takeLocal(now, need, n, limit)
}

// Settle replaces reserved, counted at at by Reserve, by used, counted at
// now: in at's slot when it is still the current one, else the
// reservation leaves the slot it was counted in (when the window still
// covers it) and used is counted at now.
func (w *Window) Settle(at, now time.Time, reserved, used int64) {
	w.mu.Lock()
	w.roll(now)
	switch at.UnixNano() / int64(w.size) {
	case w.slot:
		w.cur -= reserved
	case w.slot - 1:
		w.prev = max(w.prev-reserved, 0)
	}
	w.cur = max(w.cur+used, 0)
	w.mu.Unlock()
	if r := w.st.remote; r != nil {
		r.settleWindow(w, at, now, reserved, used)
	}
}

// Add counts n at now without a check (tokens known after a response).
func (w *Window) Add(now time.Time, n int64) {
	w.add(now, n, true)
	if r := w.st.remote; r != nil {
		r.addWindow(w, now, n)
	}
}

func (w *Window) add(now time.Time, n int64, ok bool) {
	if !ok {
		return
	}
	w.mu.Lock()
	w.roll(now)
	w.cur = max(w.cur+n, 0) // n < 0 takes back what was counted
	w.mu.Unlock()
}

// Count returns the window's current estimate.
func (w *Window) Count(now time.Time) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roll(now)
	return w.estimate(now)
}

func (w *Window) roll(now time.Time) {
	slot := now.UnixNano() / int64(w.size)
	switch {
	case slot == w.slot:
	case slot == w.slot+1:
		w.slot, w.prev, w.cur = slot, w.cur, 0
	case slot > w.slot:
		w.slot, w.prev, w.cur = slot, 0, 0
	}
}

func (w *Window) estimate(now time.Time) int64 {
	return weighted(w.prev, w.cur, w.covered(now))
}

// covered is the fraction of the previous slot the window still covers.
func (w *Window) covered(now time.Time) float64 {
	into := now.UnixNano() - w.slot*int64(w.size)
	return 1 - float64(into)/float64(w.size)
}

func weighted(prev, cur int64, covered float64) int64 {
	return int64(float64(prev)*covered) + cur
}

func (w *Window) takeLocal(now time.Time, need, n, limit int64) (bool, time.Duration) {
	if w.estimate(now)+need <= limit {
		w.cur += n
		return true, 0
	}
	return false, retryAfter(w.prev, w.cur, need, limit, w.covered(now), w.size)
}

// retryAfter is how long until prev*covered' + cur + n <= limit, given
// that the previous slot's weight falls to 0 over the current slot and
// the current slot then becomes the previous one.
func retryAfter(prev, cur, n, limit int64, covered float64, size time.Duration) time.Duration {
	if n > limit {
		return size * 2 // never fits; come back after the window has passed
	}
	if cur+n <= limit && prev > 0 {
		need := float64(limit-cur-n) / float64(prev) // covered must fall to need
		return time.Duration((covered - need) * float64(size))
	}
	// Wait for the next slot, where cur weighs by its coverage.
	wait := time.Duration(covered * float64(size))
	if cur > 0 {
		need := float64(limit-n) / float64(cur)
		wait += time.Duration((1 - need) * float64(size))
	}
	return max(wait, time.Millisecond)
}

// Period is a budget's calendar period, in UTC.
type Period uint8

// Budget periods.
const (
	Daily Period = iota + 1
	Monthly
)

func (p Period) index(now time.Time) int64 {
	now = now.UTC()
	if p == Monthly {
		return int64(now.Year())*12 + int64(now.Month())
	}
	return now.Unix() / 86400
}

// End returns when the period holding now ends.
func (p Period) End(now time.Time) time.Time { return p.end(now) }

// end returns when the period holding now ends.
func (p Period) end(now time.Time) time.Time {
	now = now.UTC()
	if p == Monthly {
		return time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
}

// Budget counts use within the current calendar period.
type Budget struct {
	name   string
	period Period
	st     *Store

	mu    sync.Mutex
	index int64
	used  int64 // this replica's, reservations included
	held  int64 // this replica's reservations not settled yet
}

// Used returns the use counted in now's period, reservations of requests
// in flight included: with Redis, every replica's (one GET; this
// replica's own count when Redis is away).
func (b *Budget) Used(now time.Time) int64 {
	used, _ := b.usedHeld(now)
	return used
}

// UsedHeld is Used and this replica's part of it still held by
// reservations of requests in flight.
func (b *Budget) UsedHeld(now time.Time) (used, held int64) { return b.usedHeld(now) }

// usedHeld is Used and this replica's part of it still held by reservations.
func (b *Budget) usedHeld(now time.Time) (used, held int64) {
	b.mu.Lock()
	b.roll(now)
	index, used, held := b.index, b.used, b.held
	b.mu.Unlock()
	if r := b.st.remote; r != nil {
		if v, err := r.budgetUsed(b, index); err == nil {
			return max(v, used), held
		}
	}
	return used, held
}

// Check reports whether the use of now's period is below limit. On a
// refusal, inFlight reports that it is only for reservations of this
// replica's requests in flight: the period's settled use is below limit.
func (b *Budget) Check(now time.Time, limit int64) (ok, inFlight bool) {
	used, held := b.usedHeld(now)
	return used < limit, used-held < limit
}

// Reserve counts n in now's period when its use is below limit, in one
// step (one script with Redis: replicas cannot both pass on the last
// room), and reports true. On a refusal it counts nothing, and inFlight
// is as for Check. n may exceed what is left: a reservation is settled to
// the real use later (Settle).
func (b *Budget) Reserve(now time.Time, n, limit int64) (ok, inFlight bool) {
	r := b.st.remote
	if r == nil {
		return b.reserveHere(now, n, limit)
	}
	ok, v, err := r.reserveBudget(b, b.period.index(now), n, limit)
	if err == nil {
		b.mu.Lock()
		b.roll(now)
		if ok { // mirror, for a later outage
			b.used += n
			b.held += n
		}
		held := b.held
		b.mu.Unlock()
		return ok, v-held < limit
	}
	ok, inFlight = b.reserveHere(now, n, limit)
	if ok && !sent(err) {
		r.addBudget(b, now, n) // Redis gets it when it is back
	}
	return ok, inFlight
}

// reserveHere is Reserve in local state alone.
func (b *Budget) reserveHere(now time.Time, n, limit int64) (ok, inFlight bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(now)
	if b.used < limit {
		b.used += n
		b.held += n
		return true, false
	}
	return false, b.used-b.held < limit
}

// Settle replaces reserved, counted at at by Reserve, by used, counted at
// now. A reservation made in a period that has ended went with it.
func (b *Budget) Settle(at, now time.Time, reserved, used int64) {
	b.mu.Lock()
	b.roll(now)
	same := b.period.index(at) == b.index
	if same {
		b.used -= reserved
		b.held = max(b.held-reserved, 0)
	}
	b.used = max(b.used+used, 0)
	b.mu.Unlock()
	if r := b.st.remote; r != nil {
		r.settleBudget(b, at, now, reserved, used)
	}
}

// Add counts n in now's period.
func (b *Budget) Add(now time.Time, n int64) {
	b.mu.Lock()
	b.roll(now)
	b.used += n
	b.mu.Unlock()
	if r := b.st.remote; r != nil {
		r.addBudget(b, now, n)
	}
}

// Resets returns when the period holding now ends.
func (b *Budget) Resets(now time.Time) time.Time { return b.period.end(now) }

func (b *Budget) roll(now time.Time) {
	if i := b.period.index(now); i != b.index {
		b.index, b.used, b.held = i, 0, 0
	}
}

// Usage is a running total of tokens (a client key's), shared across
// replicas with Redis.
type Usage struct {
	name string
	st   *Store

	mu     sync.Mutex
	totals [5]int64 // input, output, cache read, cache write, reasoning
}

// Add adds one request's counts.
func (u *Usage) Add(counts [5]int64) {
	u.mu.Lock()
	for i, n := range counts {
		u.totals[i] += n
	}
	u.mu.Unlock()
	if r := u.st.remote; r != nil {
		r.addUsage(u, counts)
	}
}

// Totals returns this process's totals since start.
func (u *Usage) Totals() [5]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.totals
}
