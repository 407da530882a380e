package openai

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
