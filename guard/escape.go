package guard

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// appendEscaped appends v as JSON string content escaped levels times
// (levels 1: text in a JSON string; 2: text in JSON inside a JSON string,
// as tool-call arguments are). Bytes that need no escape are copied as is.
func appendEscaped(dst, v []byte, levels int) []byte {
	bs := 1 << (levels - 1) // a backslash at level 1 becomes bs backslashes
	for _, c := range v {
		var seq [6]byte
		var n int
		switch {
		case c == '"' || c == '\\':
			seq[0], seq[1], n = '\\', c, 2
		case c == '\n':
			seq[0], seq[1], n = '\\', 'n', 2
		case c == '\r':
			seq[0], seq[1], n = '\\', 'r', 2
		case c == '\t':
			seq[0], seq[1], n = '\\', 't', 2
		case c < 0x20:
			seq = [6]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15]}
			n = 6
		default:
			dst = append(dst, c)
			continue
		}
		dst = appendLevel(dst, seq[:n], bs)
	}
	return dst
}

// appendLevel appends a level-1 escape sequence with its backslashes
// multiplied for deeper levels; a quote in it (\") gets bs-1 more.
func appendLevel(dst, seq []byte, bs int) []byte {
	for _, c := range seq {
		switch c {
		case '\\':
			for k := 0; k < bs; k++ {
				dst = append(dst, '\\')
			}
		case '"':
			// \" at level 1 is \\\" at level 2: the quote needs its own
			// backslash at each deeper level.
			for k := 0; k < bs-1; k++ {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendUnescaped appends the value of raw JSON string content (one level
// of escapes decoded). Invalid escapes are copied as is.
func appendUnescaped(dst, raw []byte) []byte {
	for k := 0; k < len(raw); k++ {
		c := raw[k]
		if c != '\\' || k+1 == len(raw) {
			dst = append(dst, c)
			continue
		}
		k++
		switch e := raw[k]; e {
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, n := decodeU(raw[k-1:])
			if n == 0 {
				dst = append(dst, '\\', 'u')
				continue
			}
			dst = utf8.AppendRune(dst, r)
			k += n - 2
		default: // " \ / and anything else: the byte itself
			dst = append(dst, e)
		}
	}
	return dst
}

// decodeU decodes \uXXXX (and a following low surrogate) at the start of b;
// n is the bytes used, 0 when malformed.
func decodeU(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if r >= 0xD800 && r < 0xDC00 {
		if lo, ok := hex4(b[6:]); ok && len(b) >= 12 && lo >= 0xDC00 && lo < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
