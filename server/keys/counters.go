package keys

import (
	"sync"
)

// Counters holds the limit state of client keys, by id (Key's rateID,
// tokID, budgetID: hashes of the key's name, stable across reloads).
// Times are Unix nanoseconds. Implementations must be safe for concurrent
// use and allocation-free in steady state; Local is the in-process one,
// and a shared store (Redis) may implement it for replicas.
type Counters interface {
	// Take takes n units from the token bucket id, which holds at most
	// limit units and refills limit units per minute. n == 0 only checks
	// that the bucket is not in debt. When the units are not there it
	// takes nothing and returns how long until they are.
	Take(id uint64, limit, n, now int64) (ok bool, wait int64)
	// Spend takes n units from bucket id unconditionally; the bucket may
	// go into debt (usage known only after the response).
	Spend(id uint64, limit, n, now int64)
	// PeriodUsed returns the units added to id during period p.
	PeriodUsed(id uint64, p int64) int64
	// PeriodAdd adds n units to id for period p (a new period starts at
	// zero).
	PeriodAdd(id uint64, p, n int64)
}

// Local is the in-process Counters: one small record per id, in 16
// locked shards. Ids come from configured keys only, so it is bounded by
// the configuration.
type Local struct {
	shards [16]counterShard
}

type counterShard struct {
	mu sync.Mutex
	m  map[uint64]*counter
}

// counter is a token bucket (level, at) and a period total (p, used).
type counter struct {
	level float64
	at    int64
	init  bool
	p     int64
	used  int64
}

var _ Counters = (*Local)(nil)

// NewLocal returns empty in-process counters.
func NewLocal() *Local {
	l := &Local{}
	for i := range l.shards {
		l.shards[i].m = map[uint64]*counter{}
	}
	return l
}

// get returns id's record with its shard locked; the caller unlocks.
func (l *Local) get(id uint64) (*counter, *sync.Mutex) {
	sh := &l.shards[id%16]
	sh.mu.Lock()
	c := sh.m[id]
	if c == nil {
		c = &counter{} // once per configured id
		sh.m[id] = c
	}
	return c, &sh.mu
}

const minute = 60e9

// refill brings the bucket to now.
func (c *counter) refill(limit, now int64) {
	if !c.init {
		c.level, c.at, c.init = float64(limit), now, true
		return
	}
	if now > c.at {
		c.level += float64(now-c.at) * float64(limit) / minute
		c.at = now
	}
	if c.level > float64(limit) {
		c.level = float64(limit)
	}
}

// Take implements Counters.
func (l *Local) Take(id uint64, limit, n, now int64) (bool, int64) {
	c, mu := l.get(id)
	defer mu.Unlock()
	c.refill(limit, now)
	if n == 0 { // only not in debt
		if c.level >= 0 {
			return true, 0
		}
		return false, max(int64(-c.level*minute/float64(limit)), 1)
	}
	if c.level >= float64(n) {
		c.level -= float64(n)
		return true, 0
	}
	return false, max(int64((float64(n)-c.level)*minute/float64(limit)), 1)
}

// Spend implements Counters.
func (l *Local) Spend(id uint64, limit, n, now int64) {
	c, mu := l.get(id)
	c.refill(limit, now)
	c.level -= float64(n)
	mu.Unlock()
}

// PeriodUsed implements Counters.
func (l *Local) PeriodUsed(id uint64, p int64) int64 {
	c, mu := l.get(id)
	defer mu.Unlock()
	if c.p != p {
		return 0
	}
	return c.used
}

// PeriodAdd implements Counters.
func (l *Local) PeriodAdd(id uint64, p, n int64) {
	c, mu := l.get(id)
	if c.p != p {
		c.p, c.used = p, 0
	}
	c.used += n
	mu.Unlock()
}
