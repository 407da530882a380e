package config

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder fills a Go value from a parsed YAML tree by reflection. Unlike
// yaml.Node.Decode it does not stop at the first bad value: every unknown
// field, duplicate key and type mismatch becomes a Problem with its YAML
// path and line, worded for the person editing the file.
type decoder struct {
	ps Problems
	// secret is above zero while decoding a field tagged secret:"true":
	// its values are never quoted in a problem (check's output may land
	// in a log).
	secret int
}

// quote quotes a scalar's value for a problem, or hides it in a secret.
func (d *decoder) quote(v string) string {
	if d.secret > 0 {
		return "(a value not shown: this field is secret)"
	}
	return strconv.Quote(clip(v))
}

// reword is reword, or a message without the value in a secret.
func (d *decoder) reword(err error) string {
	if d.secret > 0 {
		return "cannot decode " + d.quote("")
	}
	return reword(err)
}

// kindName names what a node is, for a problem.
func (d *decoder) kindName(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return d.quote(n.Value)
	}
	return kindName(n)
}

func (d *decoder) add(n *yaml.Node, path, format string, args ...any) {
	d.ps = append(d.ps, Problem{Path: path, Line: n.Line, Msg: fmt.Sprintf(format, args...)})
}

var (
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	yamlUnmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// decode fills v (addressable) from n.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) > 0 {
			d.decode(n.Content[0], v, path)
		}
		return
	}
	if isNull(n) {
		return // an empty value leaves the zero value (the default)
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
		return
	}
	pv := v.Addr()
	if sf, ok := pv.Interface().(scalarForm); ok && n.Kind != yaml.MappingNode {
		if n.Kind != yaml.ScalarNode {
			d.add(n, path, "want a string or a mapping {%s}, got %s", sf.fields(), d.kindName(n))
			return
		}
		sf.setScalar(n.Value)
		return
	}
	if pv.Type().Implements(yamlUnmarshaler) {
		if err := pv.Interface().(yaml.Unmarshaler).UnmarshalYAML(n); err != nil {
			d.add(n, path, "%s", d.reword(err))
		}
		return
	}
	if pv.Type().Implements(textUnmarshaler) {
		if n.Kind != yaml.ScalarNode {
			d.add(n, path, "want a single value, got %s", d.kindName(n))
			return
		}
		if err := pv.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			if d.secret > 0 {
				d.add(n, path, "cannot parse %s", d.quote(n.Value))
				return
			}
			d.add(n, path, "%s", d.reword(err))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if d.wantScalar(n, path, "a string") {
			v.SetString(n.Value)
		}
	case reflect.Bool:
		if !d.wantScalar(n, path, "true or false") {
			return
		}
		var b bool
		if err := n.Decode(&b); err != nil || n.Tag != "!!bool" {
			d.add(n, path, "want true or false, got %s", d.quote(n.Value))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !d.wantScalar(n, path, "a whole number") {
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil || n.Tag != "!!int" {
			d.add(n, path, "want a whole number, got %s", d.quote(n.Value))
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !d.wantScalar(n, path, "a whole number") {
			return
		}
		i, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, v.Type().Bits())
		if err != nil || n.Tag != "!!int" {
			d.add(n, path, "want a whole number that is not negative, got %s", d.quote(n.Value))
			return
		}
		v.SetUint(i)
	case reflect.Float32, reflect.Float64:
		if !d.wantScalar(n, path, "a number") {
			return
		}
		f, err := strconv.ParseFloat(n.Value, v.Type().Bits())
		if err != nil || math.IsNaN(f) || (n.Tag != "!!int" && n.Tag != "!!float") {
			d.add(n, path, "want a number, got %s", d.quote(n.Value))
			return
		}
		v.SetFloat(f)
	default:
		// Anything else (interfaces): let the YAML library decide.
		if err := n.Decode(pv.Interface()); err != nil {
			d.add(n, path, "%s", d.reword(err))
		}
	}
}

func (d *decoder) wantScalar(n *yaml.Node, path, what string) bool {
	if n.Kind == yaml.ScalarNode {
		return true
	}
	d.add(n, path, "want %s, got %s", what, d.kindName(n))
	return false
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, "want a mapping of fields (name: value), got %s", d.kindName(n))
		return
	}
	t := v.Type()
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.key(k, path, seen) {
			continue
		}
		f, ok := fieldByTag(t, k.Value)
		if !ok {
			msg := "unknown field"
			if s := closest(t, k.Value); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			d.add(k, joinPath(path, k.Value), "%s", msg)
			continue
		}
		if s := f.Tag.Get("secret"); s == "true" || s == "inside" {
			d.secret++
			d.decode(val, v.FieldByIndex(f.Index), joinPath(path, k.Value))
			d.secret--
			continue
		}
		d.decode(val, v.FieldByIndex(f.Index), joinPath(path, k.Value))
	}
}

// key checks one mapping key: a plain, non-empty scalar seen once.
func (d *decoder) key(k *yaml.Node, path string, seen map[string]int) bool {
	if k.Kind != yaml.ScalarNode {
		d.add(k, path, "a key must be a plain name, got %s", kindName(k))
		return false
	}
	if strings.TrimSpace(k.Value) == "" {
		d.add(k, path, "empty key")
		return false
	}
	if line, dup := seen[k.Value]; dup {
		d.add(k, joinPath(path, k.Value), "set twice (first on line %d)", line)
		return false
	}
	seen[k.Value] = k.Line
	return true
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		hint := ""
		if n.Kind == yaml.ScalarNode && d.secret == 0 {
			hint = fmt.Sprintf(" (a list of one is written [%s])", clip(n.Value))
		}
		d.add(n, path, "want a list, got %s%s", d.kindName(n), hint)
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, "want a mapping (name: value), got %s", d.kindName(n))
		return
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.add(n, path, "%s", d.reword(err))
		}
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, len(n.Content)/2))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.key(k, path, seen) {
			continue
		}
		e := reflect.New(t.Elem()).Elem()
		d.decode(val, e, joinPath(path, k.Value))
		v.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), e)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(clip(n.Value))
	}
	return "something else"
}

// reword turns a YAML library message into one for a person: no "yaml:"
// prefix, no Go type names.
func reword(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n  ")
	if i := strings.Index(s, "cannot unmarshal "); i >= 0 {
		if j := strings.Index(s[i:], " into "); j >= 0 {
			return "wrong type: " + strings.TrimSpace(s[:i]+"got "+strings.TrimPrefix(s[i+len("cannot unmarshal "):i+j], "!!"))
		}
	}
	return s
}

// closest returns the field name of t nearest to name when it is a likely
// typo (edit distance at most 2), else "".
func closest(t reflect.Type, name string) string {
	best, bestD := "", 3
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		if dd := editDistance(tag, name); dd < bestD {
			best, bestD = tag, dd
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// syntaxProblem turns a YAML syntax error into a Problem at the line where
// the mistake is. The parser reports the line where the enclosing block
// began (an indentation slip on line 5 says line 2), so the line is found
// as the shortest prefix of the file that fails with the same message.
func syntaxProblem(data []byte, err error) Problem {
	msg, line := splitYAMLError(err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	for k := 1; k <= len(lines); k++ {
		var n yaml.Node
		perr := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		if perr == nil {
			continue
		}
		if m, _ := splitYAMLError(perr); m == msg {
			line = k
			break
		}
	}
	return Problem{Path: "(syntax)", Line: line, Msg: msg}
}

func splitYAMLError(err error) (string, int) {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line, s = n, rest[i+2:]
			}
		}
	}
	return s, line
}
