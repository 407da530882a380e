package upstream

// MaxClientAgent bounds how many bytes of a client's User-Agent a
// translated request quotes.
const MaxClientAgent = 256

// AppendUserAgent appends the User-Agent of a translated request:
// "slipstream/VERSION (CLIENT)", or "slipstream/VERSION" when client (the
// client's own User-Agent, nil for none) holds nothing printable. The
// client's value is quoted as an RFC 9110 comment: at most
// MaxClientAgent bytes of it; control characters, tabs and non-ASCII
// bytes become spaces (runs of them one); a ')' or '\' that would end or
// break the comment is escaped, and parentheses left open are closed. So
// whatever a client sends, the value is one header line.
func AppendUserAgent(dst []byte, version string, client []byte) []byte {
	dst = append(dst, "slipstream/"...)
	dst = append(dst, version...)
	client = trimSpace(client)
	if len(client) == 0 {
		return dst
	}
	dst = append(dst, " ("...)
	limit := len(dst) + MaxClientAgent
	depth := 0
	for i := 0; i < len(client) && len(dst) < limit; i++ {
		c := client[i]
		switch {
		case isSpaceOrCtl(c):
			if dst[len(dst)-1] != ' ' {
				dst = append(dst, ' ')
			}
			continue
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ')' || c == '\\':
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	dst = trimRightSpace(dst)
	for ; depth > 0; depth-- {
		dst = append(dst, ')')
	}
	return append(dst, ')')
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpaceOrCtl(b[0]) {
		b = b[1:]
	}
	return trimRightSpace(b)
}

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && isSpaceOrCtl(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// isSpaceOrCtl: a space, a control character or a non-ASCII byte (a
// header value may carry none of them safely).
func isSpaceOrCtl(c byte) bool { return c <= ' ' || c >= 0x7f }
