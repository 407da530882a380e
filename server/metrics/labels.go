package metrics

import (
	"slices"

	"slipstream/server/config"
	"slipstream/server/provider"
)

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

// NewModelLabels collects the model names and patterns of a
// configuration: alias keys in name order (a map has none), then the
// providers' models in file order, so a name that two patterns match
// always gets the same label.
func NewModelLabels(c *config.Config) *ModelLabels {
	l := &ModelLabels{exact: map[string]string{}}
	add := func(name string) {
		if provider.IsPattern(name) {
			l.patterns = append(l.patterns, name)
		} else {
			l.exact[name] = name
		}
	}
	names := make([]string, 0, len(c.Aliases))
	for name := range c.Aliases {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		add(name)
	}
	for i := range c.Providers {
		for _, m := range c.Providers[i].Models {
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
