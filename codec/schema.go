package codec

import "bytes"

// SchemaOpts selects the rewrites AppendSchema applies at every depth of a
// schema (properties, items, prefixItems, anyOf, oneOf, allOf, not,
// additionalProperties, $defs, definitions).
type SchemaOpts uint8

// Schema rewrites.
const (
	// SchemaStandard turns Gemini's OpenAPI-style schema into standard JSON
	// Schema: type names lowercased ("OBJECT" -> "object"), nullable: true
	// folded into the type (["string","null"]) and, for an enum, a null
	// member; propertyOrdering and the OpenAPI-only formats (int32, int64,
	// float, double, enum) dropped.
	SchemaStandard SchemaOpts = 1 << iota
	// SchemaClosed adds additionalProperties: false to every object schema
	// that has none, as OpenAI strict mode and Anthropic structured
	// output require.
	SchemaClosed
	// SchemaAnthropic fits the schema to the subset Anthropic structured
	// output accepts: every object closed (additionalProperties of any
	// other value too becomes false), numeric and length bounds dropped
	// (minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
	// minLength, maxLength, maxItems, and minItems above 1), formats
	// outside its list dropped, and a type list (["string","null"])
	// written as anyOf, the union form it documents.
	SchemaAnthropic
)

// AppendSchema appends the JSON Schema schema to dst, rewritten as o says
// and compacted (no insignificant whitespace). With SchemaStandard alone the output is never longer than
// schema, so a caller may reserve len(schema) bytes for it. schema must be
// valid JSON; anything but an object or array is copied unchanged.
// A schema nested more than maxSchemaNesting deep is copied unchanged
// (compacted): no real schema nests that far.
func AppendSchema(dst, schema []byte, o SchemaOpts) []byte {
	if nestsDeeper(schema, maxSchemaNesting) {
		return Compact(dst, schema)
	}
	return appendSchema(dst, schema, o)
}

// maxSchemaNesting bounds the JSON nesting of a schema AppendSchema
// rewrites and SchemaStrictable checks. Both walk a schema level by
// level, and each level skips over the subschemas under it once more, so
// their work grows with depth times size: a body nested thousands of
// levels deep took seconds of CPU. Past this depth the work is bounded
// by a small multiple of the schema's size.
const maxSchemaNesting = 64

// nestsDeeper reports whether JSON b nests objects and arrays more than
// n levels deep, in one scan.
func nestsDeeper(b []byte, n int) bool {
	d := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = StringEnd(b, i)
		case '{', '[':
			if d++; d > n {
				return true
			}
		case '}', ']':
			d--
		}
	}
	return false
}

// appendSchema is AppendSchema below its depth check.
func appendSchema(dst, schema []byte, o SchemaOpts) []byte {
	switch {
	case IsObject(schema):
		return appendSchemaObject(dst, schema, o)
	case len(schema) > 0 && schema[0] == '[':
		return appendSchemaList(dst, schema, o)
	}
	return Compact(dst, schema)
}

// schemaShape is what appendSchemaObject learns about an object schema
// before writing it.
type schemaShape struct {
	nullable   bool // nullable: true
	object     bool // type "object" (any case) or properties present
	additional bool // additionalProperties present
	anyOfType  bool // a type list, and no anyOf beside it
	anyOf      bool // anyOf present
}

func readSchemaShape(schema []byte) schemaShape {
	var s schemaShape
	m := ObjectMembers(schema)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "nullable":
			s.nullable = IsTrue(v)
		case "type":
			s.object = s.object || bytes.EqualFold(StrContent(v), []byte("object"))
			s.anyOfType = len(v) > 0 && v[0] == '['
		case "properties":
			s.object = true
		case "additionalProperties":
			s.additional = true
		case "anyOf":
			s.anyOf = true
		}
	}
	s.anyOfType = s.anyOfType && !s.anyOf
	return s
}

func appendSchemaObject(dst, schema []byte, o SchemaOpts) []byte {
	s := readSchemaShape(schema)
	dst = append(dst, '{')
	first := true
	m := ObjectMembers(schema)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		if dropSchemaMember(k, v, o) {
			continue
		}
		dst = appendMemberName(dst, k, first)
		first = false
		dst = appendSchemaMember(dst, k, v, o, &s)
	}
	if o&(SchemaClosed|SchemaAnthropic) != 0 && s.object && !s.additional {
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, `"additionalProperties":false`...)
	}
	return append(dst, '}')
}

// dropSchemaMember reports whether member k: v goes away under o.
func dropSchemaMember(k, v []byte, o SchemaOpts) bool {
	if o&SchemaStandard != 0 {
		switch string(k) {
		case "nullable", "propertyOrdering":
			return true
		case "format":
			switch string(StrContent(v)) {
			case "int32", "int64", "float", "double", "enum":
				return true
			}
		}
	}
	if o&SchemaAnthropic != 0 {
		switch string(k) {
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
			"minLength", "maxLength", "maxItems":
			return true
		case "minItems":
			return IntValue(v) > 1
		case "format":
			return !anthropicFormat(StrContent(v))
		}
	}
	return false
}

// anthropicFormat reports whether Anthropic structured output supports
// the string format f.
func anthropicFormat(f []byte) bool {
	switch string(f) {
	case "date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid":
		return true
	}
	return false
}

// appendSchemaMember appends the value of member k of an object schema.
func appendSchemaMember(dst, k, v []byte, o SchemaOpts, s *schemaShape) []byte {
	std := o&SchemaStandard != 0
	switch string(k) {
	case "type":
		if o&SchemaAnthropic != 0 && !s.anyOf && (s.anyOfType || std && s.nullable && StrContent(v) != nil) {
			return appendTypeAnyOf(dst, v, std && s.nullable)
		}
		if std {
			return appendSchemaType(dst, v, s.nullable)
		}
	case "enum":
		if std && s.nullable && len(v) > 0 && v[0] == '[' && !hasNull(v) {
			dst = Compact(dst, v[:len(v)-1])
			if hasElems(v) {
				dst = append(dst, ',')
			}
			return append(dst, "null]"...)
		}
	case "properties", "$defs", "definitions", "patternProperties":
		return appendSchemaMap(dst, v, o)
	case "additionalProperties":
		if o&SchemaAnthropic != 0 {
			return append(dst, "false"...)
		}
		return appendSchema(dst, v, o)
	case "items", "not", "prefixItems", "anyOf", "oneOf", "allOf", "if", "then", "else", "contains":
		return appendSchema(dst, v, o)
	}
	return Compact(dst, v)
}

// appendSchemaType appends a type value lowercased; a nullable single type
// becomes [type, "null"].
func appendSchemaType(dst, v []byte, nullable bool) []byte {
	if t := StrContent(v); t != nil {
		if nullable && !bytes.EqualFold(t, []byte("null")) {
			dst = append(dst, '[')
			dst = appendLowerString(dst, t)
			return append(dst, `,"null"]`...)
		}
		return appendLowerString(dst, t)
	}
	if len(v) == 0 || v[0] != '[' {
		return Compact(dst, v)
	}
	dst = append(dst, '[')
	a := ArrayElems(v)
	first := true
	for e, ok := a.Next(); ok; e, ok = a.Next() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if t := StrContent(e); t != nil {
			dst = appendLowerString(dst, t)
		} else {
			dst = Compact(dst, e)
		}
	}
	return append(dst, ']')
}

// appendTypeAnyOf writes the type v (a list, or one name made nullable)
// as "anyOf" of one-type schemas in place of the "type" member whose key
// the caller already wrote: it rewinds over that key. null joins when
// nullable.
func appendTypeAnyOf(dst, v []byte, nullable bool) []byte {
	dst = dst[:len(dst)-len(`"type":`)]
	dst = append(dst, `"anyOf":[`...)
	first, hasNull := true, false
	a := ArrayElems(v)
	e, ok := a.Next()
	if StrContent(v) != nil { // one name, not a list
		e, ok = v, true
	}
	for ; ok; e, ok = a.Next() {
		t := StrContent(e)
		if t == nil {
			continue
		}
		hasNull = hasNull || bytes.EqualFold(t, []byte("null"))
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"type":`...)
		dst = appendLowerString(dst, t)
		dst = append(dst, '}')
	}
	if nullable && !hasNull {
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"null"}`...)
	}
	return append(dst, ']')
}

func appendLowerString(dst, t []byte) []byte {
	dst = append(dst, '"')
	for _, c := range t {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

// appendSchemaMap appends an object whose member values are schemas.
func appendSchemaMap(dst, v []byte, o SchemaOpts) []byte {
	if !IsObject(v) {
		return Compact(dst, v)
	}
	dst = append(dst, '{')
	first := true
	m := ObjectMembers(v)
	for k, s, ok := m.Next(); ok; k, s, ok = m.Next() {
		dst = appendMemberName(dst, k, first)
		first = false
		dst = appendSchema(dst, s, o)
	}
	return append(dst, '}')
}

// appendSchemaList appends an array whose elements are schemas.
func appendSchemaList(dst, v []byte, o SchemaOpts) []byte {
	dst = append(dst, '[')
	first := true
	a := ArrayElems(v)
	for e, ok := a.Next(); ok; e, ok = a.Next() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendSchema(dst, e, o)
	}
	return append(dst, ']')
}

func hasElems(v []byte) bool {
	a := ArrayElems(v)
	_, ok := a.Next()
	return ok
}

func hasNull(v []byte) bool {
	a := ArrayElems(v)
	for e, ok := a.Next(); ok; e, ok = a.Next() {
		if string(e) == "null" {
			return true
		}
	}
	return false
}

// SchemaNeedsStandard reports whether AppendSchema with SchemaStandard may
// change schema: it has an upper-case type name, nullable,
// propertyOrdering or a format. A cheap byte scan; false positives only
// cost a copy.
func SchemaNeedsStandard(schema []byte) bool {
	return bytes.Contains(schema, []byte(`"nullable"`)) || bytes.Contains(schema, []byte(`"propertyOrdering"`)) ||
		bytes.Contains(schema, []byte(`"format"`)) || upperTypeName(schema)
}

// upperTypeName reports whether some "type" member of JSON b has a string
// value with an upper-case letter.
func upperTypeName(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := StringEnd(b, i)
		if string(b[i+1:j]) == "type" {
			if k := SkipWS(b, j+1); k < len(b) && b[k] == ':' {
				if k = SkipWS(b, k+1); k < len(b) && b[k] == '"' {
					e := StringEnd(b, k)
					if bytes.ContainsFunc(b[k+1:e], func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
						return true
					}
					j = e
				}
			}
		}
		i = j
	}
	return false
}

// SchemaStrictable reports whether schema, once closed (SchemaClosed),
// meets OpenAI's strict structured-output rules: the root is an object
// schema, and every object schema lists all its properties in required
// and allows no additional properties.
// A schema nested more than maxSchemaNesting deep is not.
func SchemaStrictable(schema []byte) bool {
	return !nestsDeeper(schema, maxSchemaNesting) && readSchemaShape(schema).object && strictObject(schema)
}

func strictObject(schema []byte) bool {
	if !IsObject(schema) {
		return true
	}
	s := readSchemaShape(schema)
	var props, required []byte
	m := ObjectMembers(schema)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "properties":
			props = v
		case "required":
			required = v
		case "additionalProperties":
			if string(v) != "false" {
				return false
			}
		}
		if !strictChildren(k, v) {
			return false
		}
	}
	return !s.object || allRequired(props, required)
}

// strictChildren checks the subschemas held by member k.
func strictChildren(k, v []byte) bool {
	switch string(k) {
	case "properties", "$defs", "definitions":
		m := ObjectMembers(v)
		for _, s, ok := m.Next(); ok; _, s, ok = m.Next() {
			if !strictObject(s) {
				return false
			}
		}
	case "items", "not":
		return strictObject(v)
	case "anyOf", "oneOf", "allOf", "prefixItems":
		a := ArrayElems(v)
		for e, ok := a.Next(); ok; e, ok = a.Next() {
			if !strictObject(e) {
				return false
			}
		}
	}
	return true
}

// allRequired reports whether every key of props is named in required.
// Small lists are compared pair by pair, without allocating; past
// pairLimit pairs the names of required go into a set first, so that a
// schema of tens of thousands of properties costs linear time, not
// seconds.
func allRequired(props, required []byte) bool {
	const pairLimit = 1 << 12
	if countMembers(props)*countElems(required) > pairLimit {
		return allRequiredSet(props, required)
	}
	m := ObjectMembers(props)
	for k, _, ok := m.Next(); ok; k, _, ok = m.Next() {
		found := false
		a := ArrayElems(required)
		for e, ok := a.Next(); ok && !found; e, ok = a.Next() {
			found = string(StrContent(e)) == string(k)
		}
		if !found {
			return false
		}
	}
	return true
}

// allRequiredSet is allRequired through a set of the required names.
func allRequiredSet(props, required []byte) bool {
	set := make(map[string]struct{}, countElems(required))
	a := ArrayElems(required)
	for e, ok := a.Next(); ok; e, ok = a.Next() {
		set[string(StrContent(e))] = struct{}{}
	}
	m := ObjectMembers(props)
	for k, _, ok := m.Next(); ok; k, _, ok = m.Next() {
		if _, found := set[string(k)]; !found {
			return false
		}
	}
	return true
}

func countMembers(obj []byte) int {
	n := 0
	m := ObjectMembers(obj)
	for _, _, ok := m.Next(); ok; _, _, ok = m.Next() {
		n++
	}
	return n
}

func countElems(arr []byte) int {
	n := 0
	a := ArrayElems(arr)
	for _, ok := a.Next(); ok; _, ok = a.Next() {
		n++
	}
	return n
}

// appendMemberName appends k, a member name as it stands in its object
// (escapes kept), and its colon, after a comma unless it is the first.
func appendMemberName(dst, k []byte, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, k...)
	return append(dst, `":`...)
}
