package provider

import (
	"sync"
	"sync/atomic"
)

// Switches records the credentials an operator turned off (the management
// API's disable), by Credential.ID: a hash of the provider's and the
// credential's names, so a switch survives reloads like a cooldown does.
// While nothing is off, Off costs one atomic load. It is safe for
// concurrent use; the zero value and nil are ready (nothing off).
type Switches struct {
	n   atomic.Int32 // len(off), read without the lock
	mu  sync.RWMutex
	off map[uint64]struct{}
}

// NewSwitches returns an empty set: every credential on.
func NewSwitches() *Switches { return &Switches{} }

// Off reports whether the credential id is turned off.
func (s *Switches) Off(id uint64) bool {
	if s == nil || s.n.Load() == 0 {
		return false
	}
	s.mu.RLock()
	_, ok := s.off[id]
	s.mu.RUnlock()
	return ok
}

// Set turns credential id off (off true) or back on, and reports whether
// that changed anything.
func (s *Switches) Set(id uint64, off bool) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, was := s.off[id]
	switch {
	case off && !was:
		if s.off == nil {
			s.off = map[uint64]struct{}{}
		}
		s.off[id] = struct{}{}
	case !off && was:
		delete(s.off, id)
	default:
		return false
	}
	s.n.Store(int32(len(s.off)))
	return true
}

// SetSwitches makes every provider of r skip the credentials s turns off.
// It is called once, while a generation is built.
func (r *Registry) SetSwitches(s *Switches) {
	for _, p := range r.providers {
		p.off = s
	}
}

// Disabled reports whether an operator turned c off.
func (p *Provider) Disabled(c *Credential) bool { return p.off.Off(c.ID) }

// RestUntil is the end of cred's latest rest in c, for any model (Unix
// nanoseconds; 0 when c does not say or cred rests for none). It walks
// the table: for the management API, not the request path.
func RestUntil(c Cooldowns, cred uint64) int64 {
	if l, ok := c.(interface{ Latest(cred uint64) int64 }); ok {
		return l.Latest(cred)
	}
	return 0
}

// Latest is the end of cred's latest rest, for any model, or 0.
func (l *Local) Latest(cred uint64) int64 {
	var u int64
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for j := range sh.slots {
			if s := &sh.slots[j]; s.cred == cred && s.until > u {
				u = s.until
			}
		}
		sh.mu.Unlock()
	}
	return u
}
