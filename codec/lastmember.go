package codec

import "bytes"

// LastObjectMember returns the raw object value (braces included) of the
// last member named key in b, or nil; key is the member name with its
// quotes (`"usage"`). It looks from the end, without parsing what comes
// before: a response's usage follows its content, so text that happens to
// hold the key comes earlier, and b may be only the end of a body. A
// member whose object is cut short is not found. The result is a view
// into b.
func LastObjectMember(b, key []byte) []byte {
	for end := len(b); ; {
		i := bytes.LastIndex(b[:end], key)
		if i < 0 {
			return nil
		}
		end = i
		if i > 0 && b[i-1] == '\\' {
			continue // an escaped quote: inside a string
		}
		j := SkipWS(b, i+len(key))
		if j >= len(b) || b[j] != ':' {
			continue
		}
		j = SkipWS(b, j+1)
		if j >= len(b) || b[j] != '{' {
			continue
		}
		k := ValueEnd(b, j)
		if k > len(b) || b[k-1] != '}' {
			return nil
		}
		return b[j:k]
	}
}
