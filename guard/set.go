package guard

import (
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"sync"
)

// Set is a compiled rule set. It is immutable and safe for concurrent use;
// compile a new Set to change rules (placeholders stay the same while the
// key does).
type Set struct {
	rules    []rule
	detRule  [numDetectors]int16 // rule index of each enabled detector, -1 when off
	anchor   [256]bool           // bytes some enabled detector anchors on
	byAnchor [256][]detector     // enabled detectors per anchor byte, in priority order
	sweep    []byte              // the anchor bytes, when few enough to sweep with IndexByte
	nibbles  nibbleTable         // the anchor bytes for anchorMasks
	blocks   bool                // scan with anchorMasks (haveBlocks)
	prefixes []string            // how the enabled single-word detectors' matches begin
	holdRuns bool                // an enabled detector may begin like any word
	patterns []pattern
	literals []literal
	key      []byte
	hashers  sync.Pool // *hasher
}

type rule struct {
	name    string
	action  Action
	restore bool
}

type pattern struct {
	rule     uint16
	re       *regexp.Regexp
	keywords [][]byte
}

type literal struct {
	rule   uint16
	values [][]byte // JSON-escaped, as they appear in raw string content
}

var (
	processKey     []byte
	processKeyOnce sync.Once
)

// ProcessKey returns the hash key used when Config.Key is empty: 32 random
// bytes drawn once per process.
func ProcessKey() []byte {
	processKeyOnce.Do(func() {
		processKey = make([]byte, 32)
		if _, err := rand.Read(processKey); err != nil {
			panic("BUG: crypto/rand failed: " + err.Error())
		}
	})
	return processKey
}

// Compile checks cfg and builds its Set. Errors name the rule at fault and
// never quote a literal value.
func Compile(cfg Config) (*Set, error) {
	s := &Set{key: cfg.Key}
	if len(s.key) == 0 {
		s.key = ProcessKey()
	}
	for d := range s.detRule {
		s.detRule[d] = -1
	}
	on, err := enabledDetectors(cfg)
	if err != nil {
		return nil, err
	}
	for d := detector(0); d < numDetectors; d++ {
		if !on[d].on {
			continue
		}
		s.detRule[d] = int16(len(s.rules))
		s.rules = append(s.rules, rule{name: detectorNames[d], action: on[d].action, restore: on[d].restore})
		s.prefixes = append(s.prefixes, prefixes[d]...)
		s.holdRuns = s.holdRuns || holdRuns[d]
		for k := 0; k < len(anchors[d]); k++ {
			c := anchors[d][k]
			s.anchor[c] = true
			s.byAnchor[c] = append(s.byAnchor[c], d)
		}
	}
	for c := 0; c < 256; c++ {
		if s.anchor[c] {
			s.sweep = append(s.sweep, byte(c))
		}
	}
	if len(s.sweep) > maxSweeps {
		s.sweep = nil
	}
	s.nibbles, s.blocks = newNibbleTable(&s.anchor)
	s.blocks = s.blocks && haveBlocks
	if err := s.addPatterns(cfg.Patterns); err != nil {
		return nil, err
	}
	if err := s.addLiterals(cfg.Literals); err != nil {
		return nil, err
	}
	if len(s.rules) > 1<<15 {
		return nil, errors.New("cannot compile guardrails: more than 32768 rules")
	}
	s.hashers.New = func() any { return newHasher(s.key) }
	return s, nil
}

type detectorState struct {
	on      bool
	action  Action
	restore bool
}

func enabledDetectors(cfg Config) ([numDetectors]detectorState, error) {
	var on [numDetectors]detectorState
	if !cfg.OnlyRules {
		for d := range on {
			on[d].on = !optIn[d]
		}
	}
	for _, r := range cfg.Rules {
		d, ok := detectorByName(r.Name)
		if !ok {
			return on, fmt.Errorf("cannot compile guardrails: unknown detector %q", clip(r.Name))
		}
		if err := checkAction(r.Name, r.Action, r.Restore); err != nil {
			return on, err
		}
		on[d] = detectorState{on: !r.Off, action: r.Action, restore: r.Restore}
	}
	return on, nil
}

func checkAction(name string, a Action, restore bool) error {
	if a > Log {
		return fmt.Errorf("cannot compile guardrails: rule %q: unknown action %d", name, a)
	}
	if restore && a != Redact {
		return fmt.Errorf("cannot compile guardrails: rule %q: restore needs action redact", name)
	}
	return nil
}

func (s *Set) addPatterns(ps []Pattern) error {
	for _, p := range ps {
		if err := s.addRule(p.Name, p.Action, p.Restore); err != nil {
			return err
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return fmt.Errorf("cannot compile guardrails: rule %q: %w", p.Name, err)
		}
		cp := pattern{rule: uint16(len(s.rules) - 1), re: re}
		for _, k := range p.Keywords {
			if k == "" {
				return fmt.Errorf("cannot compile guardrails: rule %q: empty keyword", p.Name)
			}
			cp.keywords = append(cp.keywords, appendEscaped(nil, []byte(k), 1))
		}
		s.patterns = append(s.patterns, cp)
	}
	return nil
}

func (s *Set) addLiterals(ls []Literal) error {
	for _, l := range ls {
		if err := s.addRule(l.Name, l.Action, l.Restore); err != nil {
			return err
		}
		cl := literal{rule: uint16(len(s.rules) - 1)}
		for k, v := range l.Values {
			if v == "" {
				return fmt.Errorf("cannot compile guardrails: rule %q: value %d is empty", l.Name, k)
			}
			cl.values = append(cl.values, appendEscaped(nil, []byte(v), 1))
		}
		s.literals = append(s.literals, cl)
	}
	return nil
}

func (s *Set) addRule(name string, a Action, restore bool) error {
	if !validName(name) {
		return fmt.Errorf("cannot compile guardrails: rule name %q: want 1-%d bytes of [a-z0-9_]", clip(name), maxRuleName)
	}
	if _, ok := detectorByName(name); ok {
		return fmt.Errorf("cannot compile guardrails: rule %q: the name of a built-in detector", name)
	}
	for _, r := range s.rules {
		if r.name == name {
			return fmt.Errorf("cannot compile guardrails: rule %q: defined twice", name)
		}
	}
	if err := checkAction(name, a, restore); err != nil {
		return err
	}
	s.rules = append(s.rules, rule{name: name, action: a, restore: restore})
	return nil
}

func validName(n string) bool {
	if n == "" || len(n) > maxRuleName {
		return false
	}
	for k := 0; k < len(n); k++ {
		if c := n[k]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Rules returns the names of the enabled rules, built-in detectors first.
func (s *Set) Rules() []string {
	out := make([]string, len(s.rules))
	for k, r := range s.rules {
		out[k] = r.name
	}
	return out
}

// Len is the number of enabled rules; a Set with none need not scan.
func (s *Set) Len() int { return len(s.rules) }

// Restores reports whether any rule restores, so a caller can skip the
// restorer on responses when none does.
func (s *Set) Restores() bool {
	for _, r := range s.rules {
		if r.restore {
			return true
		}
	}
	return false
}
