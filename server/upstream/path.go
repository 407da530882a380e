package upstream

// ValidPathSegment reports whether a client-supplied model name may become
// one segment of an upstream URL path. fasthttp has already decoded the
// client's path once, so what is checked is what would be sent: no
// control bytes or spaces, nothing that ends a segment or the path (/ ? #),
// no backslash (some servers read it as /), no % (an upstream that decodes
// twice would see what the client escaped), no quote, and no "..".
func ValidPathSegment(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i, c := range s {
		switch {
		case c <= ' ' || c == 0x7f:
			return false
		case c == '/' || c == '?' || c == '#' || c == '\\' || c == '%' || c == '"':
			return false
		case c == '.' && i+1 < len(s) && s[i+1] == '.':
			return false
		}
	}
	return true
}

// AppendPathSegment appends s to dst escaped as one URL path segment
// (RFC 3986 section 3.3): every byte but the unreserved ones and the
// sub-delimiters Gemini model names use is percent-encoded, so no client
// byte can end the segment, the path, or the request line.
func AppendPathSegment(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range s {
		if isUnreserved(c) {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hex[c>>4], hex[c&15])
	}
	return dst
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '@' || c == '+'
}
