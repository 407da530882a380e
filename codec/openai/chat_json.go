package openai

import (
	"github.com/tidwall/gjson"
)

// ChatField returns the member key of the JSON object obj as a Result that
// holds only Type and Raw (a view into obj's document), or an empty Result
// when obj is not an object or has no such member. obj must come from a
// document that passed gjson.Valid.
//
// It exists because gjson unescapes every string value it returns (Str),
// which allocates for any string holding an escape: text with a newline or
// a quote costs one allocation the size of the text. Readers that only
// want the escaped view (codec.Content) use ChatField for string leaves, so
// a translated event or request allocates nothing per string. Keys are
// compared as they appear (escaped keys never match).
func ChatField(obj gjson.Result, key string) gjson.Result {
	raw := obj.Raw
	if obj.Type != gjson.JSON || len(raw) == 0 {
		return gjson.Result{}
	}
	i := chatSkipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return gjson.Result{}
	}
	for i++; ; i++ {
		i = chatSkipWS(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return gjson.Result{}
		}
		ks := i
		i = chatSkipString(raw, i)
		k := raw[ks+1 : i-1]
		i = chatSkipWS(raw, i)
		if i >= len(raw) || raw[i] != ':' {
			return gjson.Result{}
		}
		vs := chatSkipWS(raw, i+1)
		i = chatSkipValue(raw, vs)
		if k == key {
			return chatResult(raw[vs:i], obj.Index+vs)
		}
		i = chatSkipWS(raw, i)
		if i >= len(raw) || raw[i] != ',' {
			return gjson.Result{}
		}
	}
}

// chatResult types a raw value without decoding it.
func chatResult(raw string, index int) gjson.Result {
	r := gjson.Result{Raw: raw, Index: index}
	if raw == "" {
		return gjson.Result{}
	}
	switch raw[0] {
	case '"':
		r.Type = gjson.String
	case '{', '[':
		r.Type = gjson.JSON
	case 't':
		r.Type = gjson.True
	case 'f':
		r.Type = gjson.False
	case 'n':
		r.Type = gjson.Null
	default:
		return gjson.Parse(raw) // a number: Num without allocation
	}
	return r
}

func chatSkipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// chatSkipString returns the index after the string starting at s[i] ('"').
func chatSkipString(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

// chatSkipValue returns the index after the value starting at s[i].
func chatSkipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return chatSkipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = chatSkipString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t' {
		i++
	}
	return i
}
