package guardtest

import (
	"strconv"
	"unicode/utf8"
)

// escapeMode is how an encoder escapes strings; the SDKs differ.
type escapeMode int

const (
	// escapePlain is JSON.stringify: only what JSON requires.
	escapePlain escapeMode = iota
	// escapeASCII is Python's json.dumps: non-ASCII as \uXXXX.
	escapeASCII
	// escapeHTML is Go's encoding/json: <, >, & and U+2028/9 as \uXXXX.
	escapeHTML
	// escapeSlashes is PHP's json_encode: / as \/ and non-ASCII as \uXXXX.
	escapeSlashes
	numEscapeModes
)

// obj is a JSON object whose members keep their order.
type obj []member

type member struct {
	k string
	v any
}

// rawJSON is a value written as is.
type rawJSON string

// encodeJSON appends v (obj, []any, string, int, bool, nil, rawJSON) to dst.
func encodeJSON(dst []byte, v any, m escapeMode) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case string:
		return appendJSONString(dst, x, m)
	case rawJSON:
		return append(dst, x...)
	case obj:
		dst = append(dst, '{')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, e.k, m)
			dst = append(dst, ':')
			dst = encodeJSON(dst, e.v, m)
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = encodeJSON(dst, e, m)
		}
		return append(dst, ']')
	}
	panic("BUG: guardtest cannot encode a value of this type")
}

// appendJSONString appends s quoted and escaped the way mode's encoder does.
func appendJSONString(dst []byte, s string, m escapeMode) []byte {
	const hex = "0123456789abcdef"
	u := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = u(dst, r)
		case r == '/' && m == escapeSlashes:
			dst = append(dst, '\\', '/')
		case (r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029) && m == escapeHTML:
			dst = u(dst, r)
		case r >= utf8.RuneSelf && (m == escapeASCII || m == escapeSlashes):
			if r > 0xffff {
				r -= 0x10000
				dst = u(dst, 0xd800+(r>>10))
				dst = u(dst, 0xdc00+(r&0x3ff))
				continue
			}
			dst = u(dst, r)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
