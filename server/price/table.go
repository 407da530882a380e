package price

import (
	"strings"

	"slipstream/server/provider"
)

// Entry prices the models named Model: an exact name, or a glob pattern
// ('*' any run, '?' one byte; server/provider's Match).
type Entry struct {
	Model string
	Price Price
}

// Table finds a model's price. It is immutable after NewTable and safe
// for concurrent use.
type Table struct {
	layers [2]layer // the configuration's entries, then the built-in ones
}

// layer is one list of entries: exact names in a map, patterns in order.
type layer struct {
	exact    map[string]*Price
	patterns []Entry
}

// NewTable builds a table over the built-in prices (Builtin) with
// overrides, the configuration's `prices:` entries, in front of them: an
// override's name or pattern wins over every built-in entry.
func NewTable(overrides []Entry) *Table {
	t := &Table{}
	t.layers[0] = newLayer(overrides)
	t.layers[1] = newLayer(Builtin)
	return t
}

func newLayer(es []Entry) layer {
	l := layer{exact: make(map[string]*Price, len(es))}
	for i := range es {
		e := es[i]
		if provider.IsPattern(e.Model) {
			l.patterns = append(l.patterns, e)
			continue
		}
		if _, dup := l.exact[e.Model]; !dup { // the first entry of a name wins
			p := e.Price
			l.exact[e.Model] = &p
		}
	}
	return l
}

// Lookup returns the price of model (the upstream model that served a
// request), or false when it has none: unpriced, never free. In each
// layer (the configuration's, then the built-in one) an exact name wins,
// then the name without a snapshot suffix (a date such as
// "-20250929", "-2024-08-06" or "@20250929", or "-latest"), then the first
// pattern that matches. It allocates nothing. The Price is shared:
// callers must not modify it.
func (t *Table) Lookup(model string) (*Price, bool) {
	if t == nil || model == "" {
		return nil, false
	}
	base := Base(model)
	for i := range t.layers {
		if p := t.layers[i].find(model, base); p != nil {
			return p, true
		}
	}
	return nil, false
}

func (l *layer) find(model, base string) *Price {
	if p := l.exact[model]; p != nil {
		return p
	}
	if base != model {
		if p := l.exact[base]; p != nil {
			return p
		}
	}
	for i := range l.patterns {
		if provider.Match(l.patterns[i].Model, model) {
			return &l.patterns[i].Price
		}
	}
	return nil
}

// Base is model without a snapshot suffix: a date ("-20250929",
// "-2024-08-06", "@20250929") or "-latest". Providers price a snapshot as
// its model. It returns a substring of model.
func Base(model string) string {
	if m, ok := strings.CutSuffix(model, "-latest"); ok {
		return m
	}
	n := len(model)
	switch {
	case n > 9 && (model[n-9] == '-' || model[n-9] == '@') && digits(model[n-8:]):
		return model[:n-9] // -YYYYMMDD, @YYYYMMDD
	case n > 11 && model[n-11] == '-' && digits(model[n-10:n-6]) && model[n-6] == '-' &&
		digits(model[n-5:n-3]) && model[n-3] == '-' && digits(model[n-2:]):
		return model[:n-11] // -YYYY-MM-DD
	}
	return model
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
