package server

import (
	"fmt"
	"sync"
	"sync/atomic"

	"slipstream/guard"
	"slipstream/server/config"
)

// guards are a generation's compiled guardrails: one rule set for
// requests no policy matches and one per policy, built when the
// configuration is loaded (a bad rule or an unreadable list fails the
// load, or the reload, with the rule's name).
type guards struct {
	cfg      *config.Guardrails
	base     *guard.Set   // no policy matches; nil when every rule is off
	pol      []*guard.Set // policy i's set; nil when its rules are all off
	restores bool         // some rule restores: the vault is used
}

// newGuards compiles cfg's guardrails, or returns nil when they are off.
func newGuards(cfg *config.Config) (*guards, error) {
	g := &cfg.Guardrails
	if !g.On() {
		return nil, nil
	}
	key, err := g.HashKeyBytes()
	if err != nil {
		return nil, fmt.Errorf("guardrails.hash_key: %w", err)
	}
	lists := make([][]string, len(g.Lists))
	for i := range g.Lists {
		if lists[i], err = g.Lists[i].Load(); err != nil {
			return nil, fmt.Errorf("guardrails.lists[%d] (%s): %w", i, g.Lists[i].Name, err)
		}
	}
	gs := &guards{cfg: g, pol: make([]*guard.Set, len(g.Policies))}
	for p := -1; p < len(g.Policies); p++ {
		set, err := compileGuard(g, p, key, lists)
		if err != nil {
			return nil, err
		}
		if p < 0 {
			gs.base = set
		} else {
			gs.pol[p] = set
		}
		gs.restores = gs.restores || (set != nil && set.Restores())
	}
	return gs, nil
}

// compileGuard builds the rule set of policy p (-1: none) by the
// configuration's precedence (config.Guardrails.Action), or nil when it
// enables no rule.
func compileGuard(g *config.Guardrails, p int, key []byte, lists [][]string) (*guard.Set, error) {
	c := guard.Config{Key: key}
	on := 0
	for _, name := range config.GuardrailDetectors {
		gr, named := g.Action(p, name)
		if !named {
			if guard.DefaultOn(name) {
				on++
			}
			continue
		}
		a, off := guardAction(gr.Action)
		c.Rules = append(c.Rules, guard.Rule{Name: name, Action: a, Restore: gr.Restore, Off: off})
		if !off {
			on++
		}
	}
	for _, cr := range g.Custom {
		gr, _ := g.Action(p, cr.Name)
		if a, off := guardAction(gr.Action); !off {
			c.Patterns = append(c.Patterns, guard.Pattern{Name: cr.Name, Regexp: cr.Regex, Keywords: cr.Keywords, Action: a, Restore: gr.Restore})
			on++
		}
	}
	for i, l := range g.Lists {
		gr, _ := g.Action(p, l.Name)
		if a, off := guardAction(gr.Action); !off {
			c.Literals = append(c.Literals, guard.Literal{Name: l.Name, Values: lists[i], Action: a, Restore: gr.Restore})
			on++
		}
	}
	if on == 0 {
		return nil, nil
	}
	set, err := guard.Compile(c)
	if err != nil {
		return nil, fmt.Errorf("guardrails: %w", err)
	}
	return set, nil
}

// guardAction maps a validated configuration action to the engine's; off
// reports a rule turned off.
func guardAction(s string) (a guard.Action, off bool) {
	if s == config.GuardOff {
		return 0, true
	}
	a, _ = guard.ParseAction(s)
	return a, false
}

// For is the rule set for a request of key keyName served by provider,
// or nil when no rule applies.
func (g *guards) For(keyName, provider string) *guard.Set {
	if g == nil {
		return nil
	}
	if p := g.cfg.Policy(keyName, provider); p >= 0 {
		return g.pol[p]
	}
	return g.base
}

// guardVault holds the values behind the placeholders of rules that
// restore, for every generation: a reload keeps what the conversations in
// flight need. It is made when a configuration first has such a rule.
type guardVault struct {
	once sync.Once
	v    atomic.Pointer[guard.Vault]
}

// vault is the vault of the rules that restore, or nil when this
// generation has none.
func (s *Server) vault() *guard.Vault {
	if s.guards == nil || !s.guards.restores {
		return nil
	}
	g := &s.guardVault
	g.once.Do(func() { g.v.Store(guard.NewVault(guard.VaultConfig{})) })
	return g.v.Load()
}
