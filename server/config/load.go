package config

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a configuration file.
type Problem struct {
	Path string // YAML path, e.g. providers[1].kind
	Line int    // 1-based line in the file, 0 when unknown
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", p.Line, p.Path, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Path, p.Msg)
}

// Problems is every problem found in one file; it is an error.
type Problems []Problem

func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Override holds settings from the command line or the environment that
// replace the file's before defaults and validation. Empty fields change
// nothing.
type Override struct {
	// Listen replaces listen (the -listen flag, SLIPSTREAM_LISTEN).
	Listen string
}

// overridden names where an overridden value came from, in problems.
const overridden = " (-listen or SLIPSTREAM_LISTEN)"

func (o Override) apply(c *Config) {
	if o.Listen != "" {
		c.Listen = o.Listen
	}
}

// LoadFile reads, expands, parses and validates the file at path, with o
// applied.
func LoadFile(path string, o Override) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read config: %w", err)
	}
	return ParseOverride(data, os.LookupEnv, o)
}

// DefaultOverride is Default with o applied and validated.
func DefaultOverride(lookup func(string) (string, bool), o Override) (*Config, error) {
	c := Default(lookup)
	o.apply(c)
	if ps := c.Validate(); len(ps) > 0 {
		o.label(ps)
		return nil, ps
	}
	return c, nil
}

// label says which problems are about an overridden value, which has no
// line in the file.
func (o Override) label(ps Problems) {
	for i := range ps {
		if o.Listen != "" && ps[i].Path == "listen" {
			ps[i].Path, ps[i].Line = "listen"+overridden, 0
		}
	}
}

// Parse parses a configuration from YAML, expanding ${VAR} and
// ${VAR:-default} in every scalar with lookup, applies defaults and
// validates. Any error is Problems: every syntax, type and semantic
// problem found, each with its YAML path and line, in line order.
func Parse(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	return ParseOverride(data, lookup, Override{})
}

// ParseOverride is Parse with o applied before defaults and validation.
func ParseOverride(data []byte, lookup func(string) (string, bool), o Override) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Problems{syntaxProblem(data, err)}
	}
	var ps Problems
	expandNode(&root, "", lookup, &ps)
	cfg := &Config{}
	d := decoder{ps: ps}
	d.decode(&root, reflect.ValueOf(cfg).Elem(), "")
	ps = d.ps
	o.apply(cfg)
	cfg.applyDefaults()
	vs := cfg.Validate()
	locate(&root, vs)
	o.label(vs)
	for _, v := range vs {
		if !coveredBy(ps, v.Path) {
			ps = append(ps, v)
		}
	}
	if len(ps) > 0 {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
		return nil, ps
	}
	return cfg, nil
}

// coveredBy reports whether a problem at path or above it is already in
// ps: a field that did not decode is not reported again as, say, missing.
func coveredBy(ps Problems, path string) bool {
	for _, p := range ps {
		if p.Path == path || strings.HasPrefix(path, p.Path+".") || strings.HasPrefix(path, p.Path+"[") {
			return true
		}
	}
	return false
}

// expandNode expands environment references in every scalar below n.
func expandNode(n *yaml.Node, path string, lookup func(string) (string, bool), ps *Problems) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			p := path
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			expandNode(c, p, lookup, ps)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			expandNode(n.Content[i+1], joinPath(path, n.Content[i].Value), lookup, ps)
		}
	case yaml.ScalarNode:
		v, err := Expand(n.Value, lookup)
		if err != nil {
			*ps = append(*ps, Problem{Path: path, Line: n.Line, Msg: err.Error()})
			return
		}
		if v != n.Value {
			n.Value = v
			n.Style = yaml.DoubleQuotedStyle
			n.Tag = "!!str"
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Expand replaces ${VAR} and ${VAR:-default} in s. An unset VAR without a
// default is an error that names the variable (never its value).
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", clip(s))
		}
		b.WriteString(s[:i])
		name, def, hasDef := strings.Cut(s[i+2:i+j], ":-")
		v, ok := lookup(name)
		switch {
		case ok && (v != "" || !hasDef):
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} to allow that)", name, name)
		}
		s = s[i+j+1:]
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// locate fills in the line of each problem from the parsed document.
func locate(root *yaml.Node, ps Problems) {
	for i := range ps {
		if ps[i].Line == 0 {
			ps[i].Line = lineOf(root, ps[i].Path)
		}
	}
}

// lineOf finds the line of the deepest node along path (a.b[2].c). A
// mapping key may itself hold dots (an alias named gpt-4.1).
func lineOf(n *yaml.Node, path string) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	segs := splitPath(path)
	for i := 0; i < len(segs); {
		var next *yaml.Node
		j := i
		for ; j < len(segs) && next == nil; j++ {
			next = child(n, strings.Join(segs[i:j+1], "."))
		}
		if next == nil {
			break
		}
		n, line, i = next, next.Line, j
	}
	return line
}

func splitPath(path string) []string {
	path = strings.ReplaceAll(path, "[", ".[")
	return strings.FieldsFunc(path, func(r rune) bool { return r == '.' })
}

func child(n *yaml.Node, seg string) *yaml.Node {
	if n.Kind == yaml.SequenceNode && strings.HasPrefix(seg, "[") {
		var i int
		if _, err := fmt.Sscanf(seg, "[%d]", &i); err == nil && i < len(n.Content) {
			return n.Content[i]
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == seg {
			return n.Content[i+1]
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
