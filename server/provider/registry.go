package provider

import (
	"strings"

	"slipstream/codec"
	"slipstream/server/config"
)

// Registry resolves model names to providers. It is immutable after New
// and safe for concurrent use; a reload builds a new Registry.
type Registry struct {
	providers []*Provider
	aliases   map[string]Target
}

// Target is where a request goes: a provider and the model name to send it.
type Target struct {
	Provider *Provider
	// Model is the upstream model name.
	Model string
	// Aliased is true when Model differs from the client's name.
	Aliased bool
}

// NewRegistry builds the registry for a validated configuration.
func NewRegistry(c *config.Config) *Registry {
	r := &Registry{aliases: map[string]Target{}}
	for i := range c.Providers {
		r.providers = append(r.providers, New(&c.Providers[i]))
	}
	for name, target := range c.Aliases {
		prov, model, _ := strings.Cut(target, "/")
		if p := r.Provider(prov); p != nil {
			r.aliases[name] = Target{Provider: p, Model: model, Aliased: model != name}
		}
	}
	return r
}

// Providers returns the providers in file order.
func (r *Registry) Providers() []*Provider { return r.providers }

// Aliases returns the alias names and their targets.
func (r *Registry) Aliases() map[string]Target { return r.aliases }

// Provider returns the provider with the given name, or nil.
func (r *Registry) Provider(name string) *Provider {
	for _, p := range r.providers {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Resolve finds the target for a client-facing model name requested in the
// client dialect. An alias wins; otherwise, among the providers whose
// patterns match, the first that speaks the client's dialect (no
// translation needed) serves, else the first match in file order. The mock
// counts as speaking every dialect. ok is false when nothing serves model.
func (r *Registry) Resolve(model string, client codec.Dialect) (t Target, ok bool) {
	if t, ok := r.aliases[model]; ok {
		return t, true
	}
	var first *Provider
	for _, p := range r.providers {
		if !p.Serves(model) {
			continue
		}
		if p.Dialect == client || p.IsMock() {
			return Target{Provider: p, Model: model}, true
		}
		if first == nil {
			first = p
		}
	}
	if first == nil {
		return Target{}, false
	}
	return Target{Provider: first, Model: model}, true
}
