package provider

import "strconv"

// Gate decides the usability of credentials that are subscription
// accounts, beyond the (credential, model) cooldown table: an account
// rests as a whole when its quota window is used up, and is left out
// when it needs a new login or was disabled. Implementations must be
// safe for concurrent use and allocation-free.
type Gate interface {
	// Hold returns when c may be used again (Unix ns; at or before now:
	// usable), or -1 when it must not be selected at all.
	Hold(c *Credential, now int64) int64
	// First returns the index in cs to start at for strategy
	// soonest-reset (the usable account whose longer window resets
	// soonest), or -1 for none known.
	First(cs []Credential, now int64) int
}

// SetAccounts makes p's credentials the named accounts (an account
// provider's, matched under accounts_dir), judged by g and served by b.
// The credential's Secret is empty: b signs each request with the
// account's current token. It is called once, while the registry is
// built.
func (p *Provider) SetAccounts(names []string, g Gate, b Backend) {
	p.creds = p.creds[:0]
	for i, n := range names {
		p.creds = append(p.creds, Credential{Name: n, Index: i, ID: HashString(p.Name + "\x00account\x00" + n)})
	}
	p.gate, p.backend = g, b
	if p.strategy == "weighted" {
		w := make([]int, len(names))
		for i := range w {
			w[i] = 1
		}
		p.wheel = smoothWheel(w)
	}
}

// IsAccount reports whether p signs requests with subscription accounts.
func (p *Provider) IsAccount() bool { return p.gate != nil }

// AccountNames names p's accounts, for messages.
func (p *Provider) AccountNames() string {
	s := ""
	for i, c := range p.creds {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	if s == "" {
		return "none (0 accounts matched)"
	}
	return s + " (" + strconv.Itoa(len(p.creds)) + ")"
}
