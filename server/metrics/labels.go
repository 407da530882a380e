package metrics

import "slipstream/server/provider"

// Other is the model label of every name the configuration does not
// list, so clients cannot grow the series without bound.
const Other = "other"

// ModelLabels maps a client's model name to a bounded label: the name
// itself when the configuration lists it exactly (an alias or a provider
// model), else the first configured pattern that matches it, else Other.
// It is immutable; a reload builds a new one.
type ModelLabels struct {
	exact    map[string]string
	patterns []string
}

// NewModelLabels collects the names and patterns of a registry.
func NewModelLabels(r *provider.Registry) *ModelLabels {
	l := &ModelLabels{exact: map[string]string{}}
	add := func(name string) {
		if provider.IsPattern(name) {
			l.patterns = append(l.patterns, name)
		} else {
			l.exact[name] = name
		}
	}
	for name := range r.Aliases() {
		add(name)
	}
	for _, p := range r.Providers() {
		for _, m := range p.Models {
			add(m)
		}
	}
	return l
}

// Label returns model's label. model may be a view into a request: the
// label returned never is. It allocates nothing.
func (l *ModelLabels) Label(model string) string {
	if model == "" {
		return ""
	}
	if s, ok := l.exact[model]; ok {
		return s
	}
	for _, p := range l.patterns {
		if provider.Match(p, model) {
			return p
		}
	}
	return Other
}
