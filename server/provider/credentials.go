package provider

import (
	"strconv"

	"slipstream/server/config"
)

// Credential is one key of a provider. The secret never reaches a log:
// String prints the configured name.
type Credential struct {
	Secret string
	// Name is the configured name, or "key#N".
	Name  string
	Index int
	// ID names the credential in the cooldown table: a hash of the
	// provider's and the credential's names, stable across reloads.
	ID uint64
}

// CredentialID is the cooldown ID of the index-th key of provider, named
// name in the config ("" for the default "key#N").
func CredentialID(provider, name string, index int) uint64 {
	return HashString(provider + "\x00" + credentialName(name, index))
}

func credentialName(name string, index int) string {
	if name == "" {
		return "key#" + strconv.Itoa(index)
	}
	return name
}

// String identifies the credential without revealing it.
func (c *Credential) String() string { return c.Name }

func (p *Provider) initCredentials(c *config.Provider) {
	p.strategy, p.affinity = c.Strategy, c.Affinity
	p.cool = NewLocal()
	weights := make([]int, len(c.Keys))
	for i, k := range c.Keys {
		weights[i] = max(k.Weight, 1)
		p.creds = append(p.creds, Credential{Secret: k.Key, Name: credentialName(k.Name, i), Index: i, ID: CredentialID(c.Name, k.Name, i)})
	}
	if p.strategy == config.StrategyWeighted {
		p.wheel = smoothWheel(weights)
	}
}

// smoothWheel lays out credential indices in proportion to their weights,
// interleaved (smooth weighted round-robin: 5,1,1 gives a a b a c a a),
// over the weights reduced by their common divisor.
func smoothWheel(w []int) []uint16 {
	g := 0
	for _, x := range w {
		g = gcd(g, x)
	}
	total := 0
	for i := range w {
		w[i] /= g
		total += w[i]
	}
	cur := make([]int, len(w))
	wheel := make([]uint16, 0, total)
	for range total {
		best := 0
		for i := range w {
			cur[i] += w[i]
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		wheel = append(wheel, uint16(best))
	}
	return wheel
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// SetCooldowns makes p rest its credentials in c (a table shared by the
// registry, kept across reloads, or a shared store).
func (p *Provider) SetCooldowns(c Cooldowns) { p.cool = c }

// Cooldowns returns the table p's credentials rest in.
func (p *Provider) Cooldowns() Cooldowns { return p.cool }

// Credentials returns p's credentials in file order.
func (p *Provider) Credentials() []Credential { return p.creds }

// Affinity reports whether p keeps a conversation on one credential.
func (p *Provider) Affinity() bool { return p.affinity }

// start is the index the strategy begins its search at; session, when
// not 0 (affinity), fixes it for the conversation.
func (p *Provider) start(session uint64) int {
	n := uint64(len(p.creds))
	if session != 0 && p.affinity {
		if p.wheel != nil {
			return int(p.wheel[session%uint64(len(p.wheel))])
		}
		return int(session % n)
	}
	switch p.strategy {
	case config.StrategyFillFirst:
		return 0
	case config.StrategySoonestReset:
		return 0 // Pick asks the gate
	case config.StrategyWeighted:
		if p.wheel != nil {
			return int(p.wheel[(p.next.Add(1)-1)%uint64(len(p.wheel))])
		}
	}
	return int((p.next.Add(1) - 1) % n)
}

// Pick returns the credential for one attempt at model (its Hash): the
// strategy's choice (or the conversation's, for session != 0 with
// affinity), else the next one in file order that is neither resting nor
// in tried (a bit per credential index, mod 64). When none is usable it
// returns nil and soonest, the earliest time (Unix nanoseconds) one of the
// resting ones recovers (0 when all were tried). A provider without
// credentials (keyless, or the mock) returns nil, 0. Pick allocates
// nothing.
func (p *Provider) Pick(model, session, tried uint64, now int64) (c *Credential, soonest int64) {
	n := len(p.creds)
	if n == 0 {
		return nil, 0
	}
	at := p.start(session)
	if p.strategy == config.StrategySoonestReset && p.gate != nil && (session == 0 || !p.affinity) {
		if i := p.gate.First(p.creds, now); i >= 0 {
			at = i
		}
	}
	for i := 0; i < n; i++ {
		k := (at + i) % n
		if tried&(1<<(k%64)) != 0 {
			continue
		}
		cr := &p.creds[k]
		if p.off.Off(cr.ID) {
			continue // turned off by an operator
		}
		u := p.cool.Until(cr.ID, model, now)
		if p.gate != nil {
			g := p.gate.Hold(cr, now)
			if g < 0 {
				continue // needs a login, or disabled
			}
			u = max(u, g)
		}
		if u <= now {
			return cr, 0
		}
		if soonest == 0 || u < soonest {
			soonest = u
		}
	}
	return nil, soonest
}

// Keyless reports whether p sends no credential (the mock, or a local
// server configured without keys).
func (p *Provider) Keyless() bool { return len(p.creds) == 0 && p.gate == nil }
