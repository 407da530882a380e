package provider

import (
	"sync"
	"time"
)

// Cooldowns remembers which (credential, model) pairs are resting after a
// failure, and until when. Keys are Credential.ID and a model's Hash.
// Times are Unix nanoseconds. Implementations must be safe for concurrent
// use, allocation-free, and bounded in size; Local is the in-process one,
// and a shared store (Redis) may implement it for replicas.
type Cooldowns interface {
	// Until returns when (cred, model) may be used again; a time at or
	// before now (0 included) means usable.
	Until(cred, model uint64, now int64) int64
	// Cool rests (cred, model) after a failure at now for b's duration at
	// the pair's current streak of consecutive failures (this one
	// included), and returns the end of the rest.
	Cool(cred, model uint64, now int64, b Backoff) int64
	// Recover forgets the pair's streak after a success.
	Recover(cred, model uint64)
	// Forget ends every rest of cred, for every model, and forgets their
	// streaks: the credential starts afresh (a reload changed how its
	// provider is reached). It runs on reloads, not per request.
	Forget(cred uint64)
}

// Backoff is how long a failure rests its pair: Base, doubled per
// earlier failure in the streak when Exponential, at most Max (when Max
// is set).
type Backoff struct {
	Base, Max   time.Duration
	Exponential bool
}

// Rest returns the rest after the streak-th consecutive failure.
func (b Backoff) Rest(streak int) time.Duration {
	d := b.Base
	if b.Exponential {
		for i := 1; i < streak && (b.Max <= 0 || d < b.Max); i++ {
			d *= 2
		}
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	return d
}

// Local is the in-process Cooldowns: a fixed table of 1024 pairs in 16
// locked shards, each pair probed among 8 slots. When a probe window is
// full, the pair that recovers first gives way, so the table never grows
// and the worst a flood of models can do is forget a rest early.
type Local struct {
	shards [coolShards]coolShard
}

const (
	coolShards = 16
	coolSlots  = 64 // per shard
	coolProbe  = 8
)

type coolShard struct {
	mu    sync.Mutex
	slots [coolSlots]coolSlot
}

type coolSlot struct {
	cred, model uint64
	until       int64
	streak      int32
}

var _ Cooldowns = (*Local)(nil)

// NewLocal returns an empty in-process table.
func NewLocal() *Local { return &Local{} }

func (l *Local) shard(cred, model uint64) (*coolShard, int) {
	h := mix(cred, model)
	return &l.shards[h%coolShards], int(h/coolShards) % coolSlots
}

// find returns the pair's slot in sh, or nil. sh is locked.
func (sh *coolShard) find(cred, model uint64, at int) *coolSlot {
	for i := 0; i < coolProbe; i++ {
		s := &sh.slots[(at+i)%coolSlots]
		if s.cred == cred && s.model == model {
			return s
		}
	}
	return nil
}

// Until implements Cooldowns.
func (l *Local) Until(cred, model uint64, now int64) int64 {
	sh, at := l.shard(cred, model)
	sh.mu.Lock()
	var u int64
	if s := sh.find(cred, model, at); s != nil {
		u = s.until
	}
	sh.mu.Unlock()
	return u
}

// Cool implements Cooldowns.
func (l *Local) Cool(cred, model uint64, now int64, b Backoff) int64 {
	sh, at := l.shard(cred, model)
	sh.mu.Lock()
	s := sh.find(cred, model, at)
	if s == nil {
		s = sh.free(at)
		*s = coolSlot{cred: cred, model: model}
	}
	s.streak++
	s.until = now + int64(b.Rest(int(s.streak)))
	u := s.until
	sh.mu.Unlock()
	return u
}

// free returns the slot to take for a new pair: an empty one, else the
// one that recovers first. sh is locked.
func (sh *coolShard) free(at int) *coolSlot {
	var best *coolSlot
	for i := 0; i < coolProbe; i++ {
		s := &sh.slots[(at+i)%coolSlots]
		if s.cred == 0 {
			return s
		}
		if best == nil || s.until < best.until {
			best = s
		}
	}
	return best
}

// Recover implements Cooldowns.
func (l *Local) Recover(cred, model uint64) {
	sh, at := l.shard(cred, model)
	sh.mu.Lock()
	if s := sh.find(cred, model, at); s != nil {
		*s = coolSlot{}
	}
	sh.mu.Unlock()
}

// Forget implements Cooldowns: it clears cred's slots in every shard.
func (l *Local) Forget(cred uint64) {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for j := range sh.slots {
			if sh.slots[j].cred == cred {
				sh.slots[j] = coolSlot{}
			}
		}
		sh.mu.Unlock()
	}
}
