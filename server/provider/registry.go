package provider

import (
	"slices"
	"strings"

	"slipstream/codec"
	"slipstream/server/config"
)

// Registry resolves model names to providers. It is immutable after New
// and safe for concurrent use; a reload builds a new Registry.
//
// Alias keys and provider `models` entries are exact names or glob
// patterns, compiled once here. Resolve tries, in order: an exact alias,
// an exact provider model, then every pattern (aliases' and providers')
// most specific first (see moreSpecific); among equally specific
// patterns an alias wins, then a provider speaking the client's dialect,
// then file order. Resolving allocates nothing.
type Registry struct {
	providers  []*Provider
	aliases    map[string]Target      // exact alias names
	exact      map[string][]*Provider // literal provider models, file order
	rules      []rule                 // patterns, most specific first
	names      []string               // exact aliases and literal models, for lists
	configured string                 // what is configured, clipped, for 404s
	fallbacks  map[string][]Target    // per client-facing model (config fallbacks)
	cool       Cooldowns
	affinity   bool     // some provider keeps conversations on a credential
	affHeaders []string // the affinity_header names of those providers, once each
}

// Target is where a request goes: a provider and the model name to send it.
type Target struct {
	Provider *Provider
	// Model is the upstream model name.
	Model string
	// Aliased is true when Model differs from the client's name.
	Aliased bool
}

// rule is one compiled pattern: an alias key (target set) or a provider's
// models entry (target.Provider set, target.Model empty).
type rule struct {
	g      glob
	alias  bool
	target Target
	end    int // one past the last rule as specific as this one
}

// NewRegistry builds the registry for a validated configuration.
func NewRegistry(c *config.Config) *Registry {
	r := &Registry{aliases: map[string]Target{}, exact: map[string][]*Provider{}}
	for i := range c.Providers {
		r.providers = append(r.providers, New(&c.Providers[i]))
	}
	r.SetCooldowns(NewLocal())
	r.fallbacks = map[string][]Target{}
	for model, ts := range c.Fallbacks {
		for _, t := range ts {
			prov, m, _ := strings.Cut(t, "/")
			if p := r.Provider(prov); p != nil && !p.IsMock() {
				r.fallbacks[model] = append(r.fallbacks[model], Target{Provider: p, Model: m, Aliased: m != model})
			}
		}
	}
	aliasNames := make([]string, 0, len(c.Aliases))
	for name := range c.Aliases {
		aliasNames = append(aliasNames, name)
	}
	slices.Sort(aliasNames) // YAML maps have no order: name order is the tie-break
	for _, name := range aliasNames {
		prov, model, _ := strings.Cut(c.Aliases[name], "/")
		p := r.Provider(prov)
		if p == nil {
			continue
		}
		if !IsPattern(name) {
			r.aliases[name] = Target{Provider: p, Model: model, Aliased: model != name}
			r.names = append(r.names, name)
			continue
		}
		r.rules = append(r.rules, rule{g: compileGlob(name), alias: true, target: Target{Provider: p, Model: model}})
	}
	for _, p := range r.providers {
		for _, m := range p.Models {
			if !IsPattern(m) {
				if len(r.exact[m]) == 0 {
					r.names = append(r.names, m)
				}
				r.exact[m] = append(r.exact[m], p)
				continue
			}
			r.rules = append(r.rules, rule{g: compileGlob(m), target: Target{Provider: p}})
		}
	}
	r.sortRules()
	r.configured = r.describe()
	r.noteAffinity()
	return r
}

// noteAffinity records whether a provider has affinity, and the distinct
// headers they name conversations by.
func (r *Registry) noteAffinity() {
	for _, p := range r.providers {
		if !p.Affinity() {
			continue
		}
		r.affinity = true
		if h := p.Config.AffinityHeader; h != "" && !slices.Contains(r.affHeaders, h) {
			r.affHeaders = append(r.affHeaders, h)
		}
	}
}

// HasAffinity reports whether a provider of r keeps a conversation on
// one credential (strategy affinity).
func (r *Registry) HasAffinity() bool { return r.affinity }

// AffinityHeaders names the affinity_header of r's providers with
// affinity, each once. The slice is r's; callers must not modify it.
func (r *Registry) AffinityHeaders() []string { return r.affHeaders }

// sortRules orders the patterns most specific first, aliases before
// providers among equals, configuration order kept otherwise, and marks
// each group of equally specific rules.
func (r *Registry) sortRules() {
	slices.SortStableFunc(r.rules, func(a, b rule) int {
		if d := moreSpecific(&a.g, &b.g); d != 0 {
			return d
		}
		switch {
		case a.alias && !b.alias:
			return -1
		case b.alias && !a.alias:
			return 1
		}
		return 0
	})
	for i := range r.rules {
		end := i + 1
		for end < len(r.rules) && moreSpecific(&r.rules[i].g, &r.rules[end].g) == 0 {
			end++
		}
		r.rules[i].end = end
	}
}

// Providers returns the providers in file order.
func (r *Registry) Providers() []*Provider { return r.providers }

// Aliases returns the exact alias names and their targets.
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
// client dialect (see Registry for the order). The mock counts as
// speaking every dialect. A name with Claude Code's 1M-context suffix
// ("claude-opus-4-6[1m]") that no alias names exactly resolves as its
// base name, and the base name goes upstream. ok is false when nothing
// serves model.
func (r *Registry) Resolve(model string, client codec.Dialect) (t Target, ok bool) {
	if base, cut := CutLongContext(model); cut {
		if t, ok := r.aliases[model]; ok {
			return t, true
		}
		t, ok = r.resolve(base, client)
		if ok && !t.Aliased {
			t.Model, t.Aliased = base, true
		}
		return t, ok
	}
	return r.resolve(model, client)
}

func (r *Registry) resolve(model string, client codec.Dialect) (Target, bool) {
	if t, ok := r.aliases[model]; ok {
		return t, true
	}
	if ps := r.exact[model]; len(ps) > 0 {
		return Target{Provider: pick(ps, client), Model: model}, true
	}
	for i := range r.rules {
		ru := &r.rules[i]
		if !ru.g.match(model) {
			continue
		}
		if ru.alias {
			t := ru.target
			t.Aliased = t.Model != model
			return t, true
		}
		p := ru.target.Provider
		for j := i + 1; j < ru.end && !p.speaks(client); j++ {
			o := &r.rules[j]
			if !o.alias && o.target.Provider.speaks(client) && o.g.match(model) {
				p = o.target.Provider
			}
		}
		return Target{Provider: p, Model: model}, true
	}
	return Target{}, false
}

// pick returns the first of ps that speaks the client's dialect, else the
// first.
func pick(ps []*Provider, client codec.Dialect) *Provider {
	for _, p := range ps {
		if p.speaks(client) {
			return p
		}
	}
	return ps[0]
}

// CutLongContext returns model without Claude Code's context-window
// suffix ("[1m]", case-insensitive; "[2m]" likewise) and whether it had
// one. Claude Code 2.1.197 strips the suffix itself and asks for the 1M
// window with the anthropic-beta header context-1m-2025-08-07; other
// clients given such a name may send it as it is.
func CutLongContext(model string) (string, bool) {
	n := len(model)
	if n <= 4 || model[n-4] != '[' || model[n-1] != ']' || model[n-2] != 'm' && model[n-2] != 'M' {
		return model, false
	}
	if c := model[n-3]; c != '1' && c != '2' {
		return model, false
	}
	return model[:n-4], true
}

// Configured describes the configured names and patterns for an unknown
// model's 404, clipped to a few hundred bytes.
func (r *Registry) Configured() string { return r.configured }

func (r *Registry) describe() string {
	var b strings.Builder
	b.WriteString("configured names: ")
	writeList(&b, r.names)
	pats := make([]string, 0, len(r.rules))
	for i := range r.rules {
		pats = append(pats, r.rules[i].g.raw)
	}
	b.WriteString("; patterns: ")
	writeList(&b, pats)
	const max = 400
	if s := b.String(); len(s) > max {
		return s[:max] + "..."
	}
	return b.String()
}

func writeList(b *strings.Builder, xs []string) {
	if len(xs) == 0 {
		b.WriteString("none")
		return
	}
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
}

// List returns the model names a client can ask for, never a pattern:
// the exact aliases (name order), then per provider in file order its
// literal models and, for its patterns, the names fetched(p) returns (its
// upstream's list; nil when not fetched) or else the KnownModels the
// patterns match; "mock" for a mock; then the KnownModels that alias
// patterns match. Names appear once. allow filters by the client key's
// policy (nil: everything).
func (r *Registry) List(fetched func(*Provider) []string, allow func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] && (allow == nil || allow(name)) {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, n := range r.names {
		if _, ok := r.aliases[n]; ok {
			add(n)
		}
	}
	for _, p := range r.providers {
		var pats []string
		for _, m := range p.Models {
			if IsPattern(m) {
				pats = append(pats, m)
			} else {
				add(m)
			}
		}
		if len(pats) > 0 {
			var up []string
			if fetched != nil {
				up = fetched(p)
			}
			if up == nil {
				up = KnownModels
			}
			for _, m := range up {
				if MatchAny(pats, m) {
					add(m)
				}
			}
		}
		if p.IsMock() {
			add("mock")
		}
	}
	for i := range r.rules {
		if r.rules[i].alias {
			for _, m := range KnownModels {
				if r.rules[i].g.match(m) {
					add(m)
				}
			}
		}
	}
	return out
}
