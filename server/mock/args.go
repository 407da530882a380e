package mock

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// MockCommand is the shell command the mock puts in a tool call's command
// argument: harmless, and its output marks the round trip.
const MockCommand = "echo slipstream-mock"

// MockOutput is what MockCommand prints.
const MockOutput = "slipstream-mock"

// maxSchemaDepth bounds the recursion into nested and referenced schemas:
// a hostile or cyclic schema ends in a placeholder, not a stack overflow.
const maxSchemaDepth = 8

// maxArgsBytes bounds the arguments of one call: a schema of nested
// arrays with large minItems cannot make the mock build gigabytes. Past
// it, arrays and objects are closed early.
const maxArgsBytes = 64 << 10

// maxItems caps an array's minItems.
const maxItems = 4

// AppendArgs appends a JSON object that satisfies the tool's JSON Schema
// (raw bytes, nil for none): every required property gets a plausible
// value chosen by its name and type (a command for a shell tool, a path
// for a file tool, enums' first value, numbers within their bounds).
// Schemas are small: gjson reads them.
func AppendArgs(dst, schema []byte) []byte {
	if len(schema) == 0 || !gjson.ValidBytes(schema) {
		return append(dst, "{}"...)
	}
	root := gjson.ParseBytes(schema)
	g := argGen{root: root, limit: len(dst) + maxArgsBytes}
	return g.object(dst, root, 0)
}

// AppendValue appends a JSON value that satisfies a structured-output
// JSON Schema (raw bytes, nil for none), filled the way AppendArgs fills a
// tool's arguments, but with every declared property, required or not (a
// client reads the fields of a structured answer, as a model fills
// them); the root may be of any type. A schema that names no type, or
// none at all, gives an object.
func AppendValue(dst, schema []byte) []byte {
	if len(schema) == 0 || !gjson.ValidBytes(schema) {
		return append(dst, "{}"...)
	}
	root := gjson.ParseBytes(schema)
	g := argGen{root: root, limit: len(dst) + maxArgsBytes, all: true}
	s, depth := g.resolve(root, 0)
	if depth < maxSchemaDepth && !s.Get("type").Exists() && !s.Get("enum").Exists() && !s.Get("const").Exists() {
		return g.object(dst, s, depth)
	}
	return g.value(dst, "", root, 0)
}

type argGen struct {
	root  gjson.Result
	limit int  // the length dst may reach
	all   bool // fill every declared property, not only the required
}

// resolve follows a local "$ref" (#/$defs/X, #/definitions/X) and picks
// the first alternative of anyOf/oneOf/allOf.
func (g *argGen) resolve(s gjson.Result, depth int) (gjson.Result, int) {
	for ; depth < maxSchemaDepth; depth++ {
		if ref := s.Get(`\$ref`); ref.Type == gjson.String {
			path, ok := strings.CutPrefix(ref.Str, "#/")
			if !ok {
				return gjson.Result{}, depth
			}
			segs := strings.Split(path, "/")
			for i := range segs {
				segs[i] = gjson.Escape(segs[i])
			}
			s = g.root.Get(strings.Join(segs, "."))
			continue
		}
		if alt, ok := firstAlternative(s); ok {
			s = alt
			continue
		}
		return s, depth
	}
	return gjson.Result{}, depth
}

// firstAlternative returns the first non-null schema of s's anyOf, oneOf
// or allOf.
func firstAlternative(s gjson.Result) (gjson.Result, bool) {
	for _, k := range [...]string{"anyOf", "oneOf", "allOf"} {
		alts := s.Get(k)
		if !alts.IsArray() {
			continue
		}
		for _, a := range alts.Array() {
			if !strings.EqualFold(a.Get("type").Str, "null") {
				return a, true
			}
		}
	}
	return gjson.Result{}, false
}

// object appends an object with s's required properties filled (every
// declared one too when g.all).
func (g *argGen) object(dst []byte, s gjson.Result, depth int) []byte {
	dst = append(dst, '{')
	props := s.Get("properties")
	n := 0
	member := func(name string, schema gjson.Result) bool {
		if len(dst) > g.limit {
			return false
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, name)
		dst = append(dst, ':')
		dst = g.value(dst, name, schema, depth+1)
		return true
	}
	if g.all && props.IsObject() {
		props.ForEach(func(name, p gjson.Result) bool { return member(name.Str, p) })
	}
	s.Get("required").ForEach(func(_, name gjson.Result) bool {
		if name.Type != gjson.String {
			return true
		}
		p := props.Get(gjson.Escape(name.Str))
		if g.all && p.Exists() {
			return true // written above
		}
		return member(name.Str, p)
	})
	return append(dst, '}')
}

// value appends a value for the property called name with schema s.
func (g *argGen) value(dst []byte, name string, s gjson.Result, depth int) []byte {
	s, depth = g.resolve(s, depth)
	if depth >= maxSchemaDepth {
		return append(dst, "null"...)
	}
	if c := s.Get("const"); c.Exists() {
		return append(dst, c.Raw...)
	}
	if e := s.Get("enum"); e.IsArray() {
		if first := e.Get("0"); first.Exists() {
			return append(dst, first.Raw...)
		}
	}
	switch typeOf(s) {
	case "object":
		return g.object(dst, s, depth)
	case "array":
		return g.array(dst, name, s, depth)
	case "integer":
		return strconv.AppendInt(dst, int64(number(s, name)), 10)
	case "number":
		return strconv.AppendFloat(dst, number(s, name), 'f', -1, 64)
	case "boolean":
		return append(dst, "false"...)
	case "null":
		return append(dst, "null"...)
	}
	return appendString(dst, stringFor(name, s))
}

// array appends one plausible element (or minItems of them); a command
// given as an argv array runs the mock command through a shell.
func (g *argGen) array(dst []byte, name string, s gjson.Result, depth int) []byte {
	items := s.Get("items")
	it, _ := g.resolve(items, depth)
	if isCommand(name) && typeOf(it) == "string" {
		return append(dst, `["bash","-lc","`+MockCommand+`"]`...)
	}
	n := max(1, min(int(s.Get("minItems").Int()), maxItems))
	if !items.Exists() {
		n = max(0, min(int(s.Get("minItems").Int()), maxItems))
	}
	dst = append(dst, '[')
	for i := 0; i < n && len(dst) <= g.limit; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = g.value(dst, singular(name), items, depth+1)
	}
	return append(dst, ']')
}

// typeOf is s's type, lower case (Gemini's OpenAPI schemas say OBJECT);
// the first non-null of a type list; object when only properties say so.
func typeOf(s gjson.Result) string {
	t := s.Get("type")
	if t.IsArray() {
		for _, x := range t.Array() {
			if !strings.EqualFold(x.Str, "null") {
				return strings.ToLower(x.Str)
			}
		}
		return "null"
	}
	if t.Type == gjson.String {
		return strings.ToLower(t.Str)
	}
	if s.Get("properties").Exists() {
		return "object"
	}
	return "string"
}

// number picks a value within the schema's bounds: the minimum, else a
// small plausible number (a timeout in milliseconds is never 0).
func number(s gjson.Result, name string) float64 {
	v := 1.0
	if strings.Contains(strings.ToLower(name), "timeout") || strings.HasSuffix(name, "_ms") {
		v = 10000
	}
	if lo := s.Get("minimum"); lo.Exists() && v < lo.Float() {
		v = lo.Float()
	}
	if lo := s.Get("exclusiveMinimum"); lo.Type == gjson.Number && v <= lo.Float() {
		v = lo.Float() + 1
	}
	if hi := s.Get("maximum"); hi.Exists() && v > hi.Float() {
		v = hi.Float()
	}
	return v
}

func isCommand(name string) bool {
	switch strings.ToLower(name) {
	case "command", "cmd", "script", "shell_command":
		return true
	}
	return false
}

// stringFor is a plausible string for a property by its name.
func stringFor(name string, s gjson.Result) string {
	n := strings.ToLower(name)
	v := "slipstream-mock"
	switch {
	case isCommand(n):
		v = MockCommand
	case n == "path" || n == "dir" || n == "directory" || n == "cwd" || n == "workdir" || n == "working_directory":
		v = "."
	case strings.Contains(n, "path") || strings.Contains(n, "file"):
		v = "/tmp/slipstream-mock.txt"
	case n == "pattern" || n == "glob":
		v = "*.md"
	case n == "url" || n == "uri":
		v = "https://example.com/"
	case n == "query" || n == "q" || n == "search":
		v = "slipstream"
	case n == "description":
		v = "slipstream mock call"
	}
	if f := s.Get("format"); f.Type == gjson.String {
		v = formatted(f.Str, v)
	}
	if lo := int(s.Get("minLength").Int()); lo > len(v) && lo <= 4096 {
		v += strings.Repeat("x", lo-len(v))
	}
	if hi := s.Get("maxLength"); hi.Exists() && int(hi.Int()) < len(v) && hi.Int() >= 0 {
		v = v[:hi.Int()]
	}
	return v
}

// formatted is a value of a JSON Schema string format, or v for a format
// the mock does not know.
func formatted(format, v string) string {
	switch format {
	case "uri", "url":
		return "https://example.com/"
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "date":
		return "2026-01-01"
	case "time":
		return "00:00:00Z"
	case "email":
		return "mock@example.com"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	}
	return v
}

// singular names an array's element after the array ("paths" -> "path").
func singular(name string) string {
	if len(name) > 1 && name[len(name)-1] == 's' {
		return name[:len(name)-1]
	}
	return name
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	return codec.AppendQuotedString(dst, s)
}
