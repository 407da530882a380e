package accounts

import (
	"sort"
	"time"

	"slipstream/server/provider"
)

// The account-wide quota state of an entry (beside the per-model
// cooldown table): a used-up window rests every model of the account.
// Stated resets are capped (Options.MaxCooldown); when a rest ends, or
// passive headers say the window rolled, one request probes the account
// (half-open) while the others keep away, and its answer decides.

// probeWindow is how long other requests keep away from an account
// whose rest ended while one probe is in flight.
const probeWindow = 30 * time.Second

// Gate is the provider.Gate of a manager's accounts.
type Gate struct{ m *Manager }

var _ provider.Gate = Gate{}

// Gate returns the selection gate over m's accounts.
func (m *Manager) Gate() Gate { return Gate{m} }

// Hold implements provider.Gate.
func (g Gate) Hold(c *provider.Credential, now int64) int64 {
	e := g.m.lookup(c.Name)
	if e == nil || e.revoked.Load() || e.disabled.Load() {
		return -1
	}
	if r := e.retryAt.Load(); r > now {
		if t := e.tok.Load(); t == nil || t.Expiry != 0 && t.Expiry <= now {
			return r // expired, and its refresh failed: rests until the retry
		}
	}
	u := e.coolUntil.Load()
	if u == 0 || u > now {
		return u
	}
	// The rest is over: let one request probe it.
	p := e.probeUntil.Load()
	if p > now {
		return p
	}
	if e.probeUntil.CompareAndSwap(p, now+int64(probeWindow)) {
		return 0
	}
	return e.probeUntil.Load()
}

// First implements provider.Gate: the usable, unresting account whose
// longer window resets soonest (accounts with no known reset last).
func (g Gate) First(cs []provider.Credential, now int64) int {
	best, bestReset := -1, int64(0)
	for i := range cs {
		e := g.m.lookup(cs[i].Name)
		if e == nil || e.revoked.Load() || e.disabled.Load() || e.coolUntil.Load() > now {
			continue
		}
		r := e.longReset.Load()
		if r <= now {
			r = 1 << 62 // unknown or past: after every known reset
		}
		if best < 0 || r < bestReset {
			best, bestReset = i, r
		}
	}
	return best
}

// Observe applies the signal of one upstream answer from the named
// account: a quota rest (capped), a ban, passive window state. It
// returns the rest it set (zero: none) and whether the account was
// disabled.
func (m *Manager) Observe(name string, s Signal) (until time.Time, banned bool) {
	e := m.lookup(name)
	if e == nil {
		return time.Time{}, false
	}
	now := m.o.Now()
	if !s.Long.IsZero() {
		e.longReset.Store(s.Long.UnixNano())
	}
	e.util[0].Store(int64(s.Util[0] * 1e6))
	e.util[1].Store(int64(s.Util[1] * 1e6))
	if s.Ban != "" {
		m.Disable(name, s.Ban)
		return time.Time{}, true
	}
	if !s.Until.IsZero() {
		until = s.Until
		if capd := now.Add(m.maxCooldown()); until.After(capd) {
			until = capd // re-probed when the cap ends
		}
		if s.Roll.After(now) && s.Roll.Before(until) {
			until = s.Roll // the window rolls first: probe then
		}
		if s.PerModel {
			return until, false // the caller rests the (account, model) pair
		}
		if until.After(now) {
			m.Cool(name, until, s.Reason)
			return until, false
		}
	}
	if s.Open && e.coolUntil.Load() != 0 {
		m.clearCooling(e)
	}
	return time.Time{}, false
}

// Succeeded is told of an answer below 400 from the account: a probe
// that went through ends the account's rest.
func (m *Manager) Succeeded(name string) {
	e := m.lookup(name)
	if e == nil || e.coolUntil.Load() == 0 || e.coolUntil.Load() > m.o.Now().UnixNano() {
		return
	}
	m.clearCooling(e)
}

func (m *Manager) clearCooling(e *entry) {
	if e.coolUntil.Swap(0) == 0 {
		return // another answer cleared it
	}
	m.o.Log.Printf("accounts: %s is back (its quota window has room)", e.name)
	m.Cool(e.name, time.Time{}, "")
}

func (m *Manager) maxCooldown() time.Duration {
	if m.o.MaxCooldown > 0 {
		return m.o.MaxCooldown
	}
	return 6 * time.Hour
}

// Cooling returns the named account's rest (zero: none).
func (m *Manager) Cooling(name string) time.Time {
	e := m.lookup(name)
	if e == nil || e.coolUntil.Load() == 0 {
		return time.Time{}
	}
	return time.Unix(0, e.coolUntil.Load())
}

// Utilisation returns the short and long window utilisation (0..1, -1
// unknown) the passive headers last reported.
func (m *Manager) Utilisation(name string) [2]float64 {
	e := m.lookup(name)
	if e == nil {
		return [2]float64{-1, -1}
	}
	return [2]float64{float64(e.util[0].Load()) / 1e6, float64(e.util[1].Load()) / 1e6}
}

// Names lists the loaded accounts.
func (m *Manager) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ns := make([]string, 0, len(m.accs))
	for n := range m.accs {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}
