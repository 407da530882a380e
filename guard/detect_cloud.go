package guard

// matchAWSKeyID: AKIA/ASIA/ABIA/ACCA + 16 of [A-Z2-7], a whole word.
func matchAWSKeyID(b []byte, i int, final bool) (int, int, result) {
	if !wordStart(b, i) {
		return 0, 0, miss
	}
	for _, p := range [...]string{"AKIA", "ASIA", "ABIA", "ACCA"} {
		switch litAt(b, i, p, final) {
		case hit:
			e, r := fixedRun(b, i+4, 16, cB32, cAlnum, final)
			return i, e, r
		case need:
			return i, 0, need
		}
	}
	return 0, 0, miss
}

// matchAWSSecret: 40 base64 bytes after a secret-access-key keyword
// (secret_access_key in any case, as in AWS_SECRET_ACCESS_KEY, or
// SecretAccessKey) and an '=' or ':' with optional quotes and spaces. Only
// the 40 bytes are the match.
func matchAWSSecret(b []byte, i int, final bool) (int, int, result) {
	var j int
	switch b[i] {
	case '_':
		if !foldBefore(b, i, "secret") {
			return 0, 0, miss
		}
		if r := foldAt(b, i, "_access_key", final); r != hit {
			return i, 0, r
		}
		j = i + len("_access_key")
	default: // 'A'
		if !foldBefore(b, i, "secret") {
			return 0, 0, miss
		}
		if r := litAt(b, i, "AccessKey", final); r != hit {
			return i, 0, r
		}
		j = i + len("AccessKey")
	}
	v, r := skipAssign(b, j, final)
	if r != hit {
		return v, 0, r
	}
	e, r := b64Exact(b, v, 40, true, final)
	if r == hit && !mixed(b[v:e]) {
		return 0, 0, miss
	}
	return v, e, r
}

// matchGCPKeyID: the 40 hex digits of a service-account key file's
// "private_key_id" member. The key itself ("private_key": a PEM block) is
// reported by private_key; this rule names the file's identity so that the
// pair is redacted and counted as one service-account key.
func matchGCPKeyID(b []byte, i int, final bool) (int, int, result) {
	if !litBefore(b, i, "private") {
		return 0, 0, miss
	}
	if r := litAt(b, i, "_key_id", final); r != hit {
		return i, 0, r
	}
	v, r := skipAssign(b, i+len("_key_id"), final)
	if r != hit {
		return v, 0, r
	}
	e, r := fixedRun(b, v, 40, cHex, cAlnum, final)
	return v, e, r
}

// matchGoogleAPIKey: AIza + 35 of [0-9A-Za-z_-] (Google Cloud and Google AI
// Studio keys share the format).
func matchGoogleAPIKey(b []byte, i int, final bool) (int, int, result) {
	if !wordStart(b, i) {
		return 0, 0, miss
	}
	if r := litAt(b, i, "AIza", final); r != hit {
		return i, 0, r
	}
	e, r := fixedRun(b, i+4, 35, cURL64, cURL64, final)
	return i, e, r
}

// matchAzureKey: the value of AccountKey= in a storage connection string:
// 86 base64 bytes and "==" (a 64-byte key). Only the value is the match.
func matchAzureKey(b []byte, i int, final bool) (int, int, result) {
	if r := litAt(b, i, "AccountKey=", final); r != hit {
		return i, 0, r
	}
	v := i + len("AccountKey=")
	e, r := b64Exact(b, v, 86, false, final)
	if r != hit {
		return v, 0, r
	}
	if r := litAt(b, e, "==", final); r != hit {
		return v, 0, r
	}
	e += 2
	if e == len(b) && !final {
		return v, 0, need
	}
	if e < len(b) && (is(b[e], cB64) || b[e] == '=') {
		return 0, 0, miss
	}
	return v, e, hit
}

// skipAssign skips what separates a keyword from its value: at most 16
// bytes of spaces, quotes (raw or escaped) and one '=' or ':'. It returns the
// value's first byte.
func skipAssign(b []byte, j int, final bool) (int, result) {
	assigned := false
	for k := j; k < j+16; k++ {
		if k == len(b) {
			if final {
				return 0, miss
			}
			return k, need
		}
		switch b[k] {
		case '\\': // only an escaped quote, at any level (\" or \\\")
			q := k
			for q < len(b) && b[q] == '\\' {
				q++
			}
			if q == len(b) && !final {
				return q, need
			}
			if q == len(b) || b[q] != '"' {
				return 0, miss
			}
			k = q
		case ' ', '\t', '"', '\'':
		case '=', ':':
			if assigned {
				return 0, miss
			}
			assigned = true
		default:
			if !assigned {
				return 0, miss
			}
			return k, hit
		}
	}
	return 0, miss
}

// mixed reports whether v has an upper-case letter, a lower-case letter and
// a digit or symbol, as 40 random base64 bytes do: it keeps words and
// EXAMPLEs of one case out.
func mixed(v []byte) bool {
	var u, l, o bool
	for _, c := range v {
		switch {
		case c >= 'A' && c <= 'Z':
			u = true
		case c >= 'a' && c <= 'z':
			l = true
		default:
			o = true
		}
	}
	return u && l && o
}

// foldBefore reports whether b[i-len(s):i] equals the lower-case s ignoring
// case.
func foldBefore(b []byte, i int, s string) bool {
	if i < len(s) {
		return false
	}
	return foldAt(b, i-len(s), s, true) == hit
}
