package guard

import "encoding/base64"

// matchPrivateKey: a PEM or OpenSSH private key block, "-----BEGIN <words>
// PRIVATE KEY-----" through the "-----END ...-----" footer. The body may hold
// base64, headers (Proc-Type, DEK-Info), spaces and the JSON escapes \n \r \t
// \/ \\ (a key inside a JSON string, or inside JSON inside a string). A block
// longer than maxPEM is cut at the bound; a block without its footer (a
// truncated paste) ends at its last body byte. Both are still redacted.
func matchPrivateKey(b []byte, i int, final bool) (int, int, result) {
	if r := litAt(b, i, "-----BEGIN ", final); r != hit {
		return i, 0, r
	}
	j := i + len("-----BEGIN ")
	n, more := run(b, j, cHdr, 48)
	if more && !final {
		return i, 0, need
	}
	if n > 48 || !litBefore(b, j+n, "PRIVATE KEY") {
		return 0, 0, miss
	}
	j += n
	if r := litAt(b, j, "-----", final); r != hit {
		return i, 0, r
	}
	e, r := pemBody(b, i, j+5, final)
	return i, e, r
}

// pemBody scans from j to the end of the block that starts at s.
func pemBody(b []byte, s, j int, final bool) (int, result) {
	for {
		if j-s >= maxPEM {
			return j, hit
		}
		if j == len(b) {
			if final {
				return j, hit
			}
			return 0, need
		}
		c := b[j]
		switch {
		case c == '\\':
			if j+1 == len(b) {
				if final {
					return j, hit
				}
				return 0, need
			}
			if !isByte(b[j+1], "nrt/\\") {
				return j, hit
			}
			j += 2
		case c == '-':
			switch litAt(b, j, "-----END ", final) {
			case hit:
				return pemFooter(b, s, j+len("-----END "), final)
			case need:
				return 0, need
			}
			if j+1 < len(b) && b[j+1] == '-' {
				return j, hit
			}
			j++
		case is(c, cPEM):
			j++
		default:
			return j, hit
		}
	}
}

// pemFooter ends the block after "-----END <words>-----".
func pemFooter(b []byte, s, j int, final bool) (int, result) {
	n, more := run(b, j, cHdr, 48)
	if more && !final {
		return 0, need
	}
	if n > 48 {
		return j - len("-----END "), hit
	}
	switch litAt(b, j+n, "-----", final) {
	case hit:
		return min(j+n+5, s+maxPEM), hit
	case need:
		return 0, need
	}
	return j - len("-----END "), hit
}

// maxJWT bounds a JWT's length; a longer dotted base64url run is no match.
const maxJWT = 8 << 10

// matchJWT: eyJ<header>.eyJ<payload>.<signature>, base64url parts, the
// header decoding to JSON with an "alg" member; the anchor is the 'J'.
func matchJWT(b []byte, i int, final bool) (int, int, result) {
	s := i - 2
	if s < 0 || b[s] != 'e' || b[s+1] != 'y' || !jwtStart(b, s) {
		return 0, 0, miss
	}
	j := s
	var hdr int
	for part := 0; part < 3; part++ {
		lim := maxJWT - (j - s)
		if part == 0 {
			lim = maxJWTHeader
		}
		n, more := run(b, j, cURL64, lim)
		if more && !final {
			return s, 0, need
		}
		if n < 10 || n > lim {
			return 0, 0, miss
		}
		j += n
		if part == 0 {
			hdr = n
		}
		if part == 2 {
			break
		}
		if r := litAt(b, j, ".", final); r != hit {
			return s, 0, r
		}
		j++
		if part == 0 {
			if r := litAt(b, j, "eyJ", final); r != hit {
				return s, 0, r
			}
		}
	}
	if j == len(b) && !final {
		return s, 0, need
	}
	if j < len(b) && (b[j] == '.' || b[j] == '=') {
		return 0, 0, miss
	}
	if !jwtHeader(b[s : s+hdr]) {
		return 0, 0, miss
	}
	return s, j, hit
}

// maxJWTHeader bounds the header part (base64 of at most 768 bytes).
const maxJWTHeader = 1024

// jwtStart reports whether a JWT may start at s: not inside a run of
// base64url bytes, so that a long run is read once from its start, not
// again from every "eyJ" in it.
func jwtStart(b []byte, s int) bool {
	if s == 0 || !is(b[s-1], cURL64) {
		return true
	}
	_, esc := escBefore(b, s)
	return esc
}

// jwtHeader reports whether h, base64url without padding, decodes to a JSON
// object with an "alg" member.
func jwtHeader(h []byte) bool {
	var dst [768]byte
	if base64.RawURLEncoding.DecodedLen(len(h)) > len(dst) {
		return false
	}
	n, err := base64.RawURLEncoding.Decode(dst[:], h)
	if err != nil {
		return false
	}
	d := dst[:n]
	return len(d) > 0 && d[0] == '{' && contains(d, `"alg"`)
}
