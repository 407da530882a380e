package codec

import (
	"github.com/tidwall/gjson"

	"slipstream/pool"
)

// Raw JSON scanning. gjson unescapes every string value it returns into
// Result.Str, which allocates a copy of any string holding an escape
// (nearly all model text), and each gjson.Get scans the document from the
// start. Readers therefore walk objects once with Members and read string
// leaves with StrContent: views into the input, no copy, no rescan. All
// functions here expect input that passed gjson.Valid.

// Members iterates the members of a JSON object.
type Members struct {
	b []byte
	i int
}

// ObjectMembers returns an iterator over the members of raw; it yields
// nothing unless raw is an object.
func ObjectMembers(raw []byte) Members {
	if len(raw) == 0 || raw[0] != '{' {
		return Members{}
	}
	return Members{b: raw, i: 1}
}

// Next returns the next member's key (escaped content, no quotes) and raw
// value, both views into the object.
func (m *Members) Next() (key, val []byte, ok bool) {
	i := skipSep(m.b, m.i)
	if i >= len(m.b) || m.b[i] != '"' {
		m.i = len(m.b)
		return nil, nil, false
	}
	e := StringEnd(m.b, i)
	if e >= len(m.b) { // a key never closed: the bytes were cut short
		m.i = len(m.b)
		return nil, nil, false
	}
	key = m.b[i+1 : e]
	i = SkipWS(m.b, e+1)
	if i < len(m.b) && m.b[i] == ':' {
		i = SkipWS(m.b, i+1)
	}
	end := ValueEnd(m.b, i)
	m.i = end
	return key, m.b[i:end], true
}

// Elems iterates the elements of a JSON array.
type Elems struct {
	b []byte
	i int
}

// ArrayElems returns an iterator over the elements of raw; it yields
// nothing unless raw is an array.
func ArrayElems(raw []byte) Elems {
	if len(raw) == 0 || raw[0] != '[' {
		return Elems{}
	}
	return Elems{b: raw, i: 1}
}

// Next returns the next element's raw value, a view into the array.
func (a *Elems) Next() ([]byte, bool) {
	i := skipSep(a.b, a.i)
	if i >= len(a.b) || a.b[i] == ']' {
		a.i = len(a.b)
		return nil, false
	}
	end := ValueEnd(a.b, i)
	a.i = end
	return a.b[i:end], true
}

// Member returns the raw value of the member key of object raw, or nil.
// The first of duplicate keys wins, as in gjson.
func Member(raw []byte, key string) []byte {
	m := ObjectMembers(raw)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		if string(k) == key {
			return v
		}
	}
	return nil
}

// Field is Member as a gjson.Result that holds only Type and Raw (never an
// unescaped Str), for code that reads nested values with gjson.
func Field(obj gjson.Result, key string) gjson.Result {
	if obj.Type != gjson.JSON {
		return gjson.Result{}
	}
	return ResultOf(Member(pool.S2B(obj.Raw), key))
}

// ResultOf types a raw JSON value as a gjson.Result without decoding a
// string (numbers are parsed, which does not allocate). nil gives the zero
// Result.
func ResultOf(v []byte) gjson.Result {
	if len(v) == 0 {
		return gjson.Result{}
	}
	raw := pool.B2S(v)
	switch v[0] {
	case '"':
		return gjson.Result{Type: gjson.String, Raw: raw}
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: raw}
	}
	return gjson.Parse(raw)
}

// StrContent returns the escaped content of a raw JSON string, or nil
// when v is not a string.
func StrContent(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	return v[1 : len(v)-1]
}

// IsObject reports whether raw JSON v is an object.
func IsObject(v []byte) bool { return len(v) > 0 && v[0] == '{' }

// IsTrue reports whether raw JSON v is true.
func IsTrue(v []byte) bool { return string(v) == "true" }

// maxCount caps parsed integers so that sums of token counts cannot wrap.
const maxCount = 1 << 50

// IntValue returns the integer part of a raw JSON number, or 0; digits
// past 2^50 are ignored.
func IntValue(v []byte) int64 {
	var n int64
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	for _, c := range v {
		if c < '0' || c > '9' || n > maxCount {
			break
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// skipSep skips whitespace and one comma.
func skipSep(b []byte, i int) int {
	i = SkipWS(b, i)
	if i < len(b) && b[i] == ',' {
		i = SkipWS(b, i+1)
	}
	return i
}

// SkipWS returns the index of the first non-whitespace byte at or after i.
func SkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd returns the index of the quote closing the string that opens
// at i, or len(b).
func StringEnd(b []byte, i int) int {
	end, ok := stringShape(b, i+1)
	if !ok {
		return len(b)
	}
	return end - 1
}

// ValueEnd returns the index just after the JSON value starting at i.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return min(StringEnd(b, i)+1, len(b))
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = StringEnd(b, j)
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
		j++
	}
	return j
}
