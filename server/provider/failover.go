package provider

import "slipstream/codec"

// SetCooldowns makes every provider of r rest its credentials in c: one
// table for the registry, which a reload may carry over (credential IDs
// are stable) or a shared store may replace.
func (r *Registry) SetCooldowns(c Cooldowns) {
	r.cool = c
	for _, p := range r.providers {
		p.SetCooldowns(c)
	}
}

// Cooldowns returns the table r's providers rest their credentials in.
func (r *Registry) Cooldowns() Cooldowns { return r.cool }

// AppendAlternatives appends to dst the targets a request for model
// (resolved to first) may fail over to, in order: the other providers
// that serve first.Model (those speaking the client's dialect first, then
// file order), then model's fallbacks. The mock is never an alternative,
// nor is first itself. It allocates only when dst must grow.
func (r *Registry) AppendAlternatives(dst []Target, model string, first Target, client codec.Dialect) []Target {
	for pass := 0; pass < 2; pass++ {
		for _, p := range r.providers {
			if p == first.Provider || p.IsMock() || p.speaks(client) != (pass == 0) || !p.Serves(first.Model) {
				continue
			}
			dst = append(dst, Target{Provider: p, Model: first.Model, Aliased: first.Aliased})
		}
	}
	for _, t := range r.fallbacks[model] {
		if t.Provider != first.Provider || t.Model != first.Model {
			dst = append(dst, t)
		}
	}
	return dst
}
