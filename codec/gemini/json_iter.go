package gemini

// gjson unescapes (and so allocates) every string value it hands out that
// holds an escape, which is most text. The iterators below walk JSON that
// was already checked valid and yield raw views only, so reading a part
// costs nothing whatever its text holds.

// members iterates the members of a JSON object.
type members struct {
	b []byte
	i int
}

// objectMembers returns an iterator over raw, which must be valid JSON; it
// yields nothing unless raw is an object.
func objectMembers(raw []byte) members {
	if len(raw) == 0 || raw[0] != '{' {
		return members{}
	}
	return members{b: raw, i: 1}
}

// next returns the next member's key (escaped content, no quotes) and raw
// value.
func (m *members) next() (key, val []byte, ok bool) {
	i := skipSep(m.b, m.i)
	if i >= len(m.b) || m.b[i] != '"' {
		m.i = len(m.b)
		return nil, nil, false
	}
	e := stringEnd(m.b, i)
	key = m.b[i+1 : e]
	i = skipWS(m.b, e+1)
	if i < len(m.b) && m.b[i] == ':' {
		i = skipWS(m.b, i+1)
	}
	end := valueEnd(m.b, i)
	m.i = end
	return key, m.b[i:end], true
}

// elems iterates the elements of a JSON array.
type elems struct {
	b []byte
	i int
}

// arrayElems returns an iterator over raw, which must be valid JSON; it
// yields nothing unless raw is an array.
func arrayElems(raw []byte) elems {
	if len(raw) == 0 || raw[0] != '[' {
		return elems{}
	}
	return elems{b: raw, i: 1}
}

func (a *elems) next() ([]byte, bool) {
	i := skipSep(a.b, a.i)
	if i >= len(a.b) || a.b[i] == ']' {
		a.i = len(a.b)
		return nil, false
	}
	end := valueEnd(a.b, i)
	a.i = end
	return a.b[i:end], true
}

// skipSep skips whitespace and one comma.
func skipSep(b []byte, i int) int {
	i = skipWS(b, i)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	return i
}

// valueEnd returns the index just after the JSON value starting at i.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i) + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j)
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

// strContent returns the escaped content of a raw JSON string, or nil when
// v is not a string.
func strContent(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	return v[1 : len(v)-1]
}

func isObjectRaw(v []byte) bool { return len(v) > 0 && v[0] == '{' }

func isTrue(v []byte) bool { return string(v) == "true" }

// maxCount caps parsed integers so that sums of token counts cannot wrap.
const maxCount = 1 << 50

// intValue returns the integer part of a raw JSON number, or 0; digits past
// maxCount are ignored.
func intValue(v []byte) int64 {
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

// member returns the raw value of the member camel (or snake) of object raw.
func member(raw []byte, camel, snake string) []byte {
	m := objectMembers(raw)
	for k, v, ok := m.next(); ok; k, v, ok = m.next() {
		if string(k) == camel || string(k) == snake {
			return v
		}
	}
	return nil
}
