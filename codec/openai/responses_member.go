package openai

import (
	"github.com/tidwall/gjson"

	"slipstream/pool"
)

// respMember returns the raw JSON value of the top-level member key of the
// JSON object obj (valid JSON, as checked by the caller), or nil. Unlike
// gjson.Get it never unescapes a string, so reading a delta with escapes
// in it allocates nothing. Keys are compared as written (escaped).
func respMember(obj []byte, key string) []byte {
	i := respSkipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i++
	for {
		i = respSkipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil
		}
		end := respStringEnd(obj, i)
		k := obj[i+1 : end-1]
		i = respSkipWS(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = respSkipWS(obj, i+1)
		vend := respValueEnd(obj, i)
		if string(k) == key {
			return obj[i:vend]
		}
		i = respSkipWS(obj, vend)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
		i++
	}
}

// respContent returns the escaped content of a raw JSON string value, or
// nil when raw is not a string.
func respContent(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return nil
	}
	return raw[1 : len(raw)-1]
}

func respSkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// respStringEnd returns the index after the string starting at b[i] ('"').
func respStringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// respValueEnd returns the index after the value starting at b[i].
func respValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return respStringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = respStringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
		i++
	}
	return i
}

// respStr returns the escaped content of obj's string member key as a view
// into the document obj came from, or nil. gjson would unescape it into a
// fresh string first (a copy of every text in a request).
func respStr(obj gjson.Result, key string) []byte {
	return respContent(respMember(pool.S2B(obj.Raw), key))
}

// respVal returns the raw value of obj's member key (a view), or nil.
func respVal(obj gjson.Result, key string) []byte {
	return respMember(pool.S2B(obj.Raw), key)
}

// respParse returns a gjson view of a raw value that is not a string (so
// gjson has nothing to unescape).
func respParse(raw []byte) gjson.Result {
	if len(raw) == 0 || raw[0] == '"' {
		return gjson.Result{}
	}
	return gjson.Parse(pool.B2S(raw))
}

// respEachMember calls fn for each top-level member of the JSON object obj
// (valid JSON) with the key as written and the raw value.
func respEachMember(obj []byte, fn func(key string, val []byte)) {
	i := respSkipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	for i++; ; i++ {
		i = respSkipWS(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return
		}
		end := respStringEnd(obj, i)
		key := pool.B2S(obj[i+1 : end-1])
		if i = respSkipWS(obj, end); i >= len(obj) || obj[i] != ':' {
			return
		}
		i = respSkipWS(obj, i+1)
		vend := respValueEnd(obj, i)
		fn(key, obj[i:vend])
		if i = respSkipWS(obj, vend); i >= len(obj) || obj[i] != ',' {
			return
		}
	}
}
