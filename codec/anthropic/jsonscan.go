package anthropic

import (
	"github.com/tidwall/gjson"

	"slipstream/pool"
)

// gjson unescapes every string value it returns (Result.Str), which
// allocates when the string holds an escape: nearly every text delta does.
// The decoder reads its string fields with str instead, which only slices.

// str returns the escaped content (no quotes) of the string member key of
// the JSON object r, as a view into r's document, or nil when r is not an
// object or the member is missing or not a string. The document must be
// valid JSON.
func str(r gjson.Result, key string) []byte {
	if r.Type != gjson.JSON {
		return nil
	}
	v := member(pool.S2B(r.Raw), key)
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	return v[1 : len(v)-1]
}

// member returns the raw value of the top-level member key of the JSON
// object obj, or nil. The first of duplicate keys wins, as in gjson.
func member(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	for i++; ; i++ {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil
		}
		kEnd := skipString(obj, i)
		if kEnd < 0 {
			return nil
		}
		k := obj[i+1 : kEnd-1]
		i = skipSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = skipSpace(obj, i+1)
		vEnd := skipValue(obj, i)
		if vEnd < 0 {
			return nil
		}
		if string(k) == key {
			return obj[i:vEnd]
		}
		i = skipSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(b)
}

// skipNested skips an object or array, strings inside included.
func skipNested(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			if j = skipString(b, j); j < 0 {
				return -1
			}
			j--
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}

// field returns the member key of the JSON object r as a Result holding
// only Type and Raw (a view into r's document), never an unescaped Str,
// so reading a large string member (a tool result, a text block) costs no
// copy. Numbers are parsed (no allocation); a missing member is the zero
// Result.
func field(r gjson.Result, key string) gjson.Result {
	if r.Type != gjson.JSON {
		return gjson.Result{}
	}
	v := member(pool.S2B(r.Raw), key)
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
