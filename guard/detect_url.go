package guard

// schemes are the database URL schemes whose password database_url redacts.
var schemes = [...]string{"postgres", "postgresql", "mysql", "mongodb", "mongodb+srv",
	"redis", "rediss", "amqp", "amqps"}

// matchDatabaseURL: scheme://user:password@host for the schemes above; the
// anchor is the '@' and the match is the password only, so the host and
// database stay readable.
func matchDatabaseURL(b []byte, i int, final bool) (int, int, result) {
	j := i - 1
	for ; j >= 0 && j > i-256; j-- {
		c := b[j]
		if c == '/' {
			break
		}
		if !is(c, cUserinfo) && c != ':' {
			return 0, 0, miss
		}
	}
	if j < 0 || b[j] != '/' {
		return 0, 0, miss
	}
	u := j + 1 // userinfo start
	se, ok := slashLitBefore(b, u, "://")
	if !ok || !isScheme(b, se) {
		return 0, 0, miss
	}
	colon := -1
	for k := u; k < i; k++ {
		if b[k] == ':' {
			colon = k
			break
		}
	}
	if colon < 0 || colon+1 == i || dummyPassword(b[colon+1:i]) {
		return 0, 0, miss
	}
	if i+1 == len(b) {
		if final {
			return 0, 0, miss
		}
		return colon + 1, 0, need
	}
	if !is(b[i+1], cHost) && b[i+1] != '[' {
		return 0, 0, miss
	}
	return colon + 1, i, hit
}

// dummyPassword reports a password that is documentation, not a secret:
// upper-case words (PASSWORD, DB_PASS, $DB_PASSWORD), a format verb (%s), one
// repeated character (xxxx, ****), or the word password itself.
func dummyPassword(p []byte) bool {
	if p[0] == '%' && len(p) <= 2 {
		return true
	}
	upper, same := true, true
	if p[0] == '$' && len(p) > 1 {
		p = p[1:]
	}
	for _, c := range p {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			upper = false
		}
		if c != p[0] {
			same = false
		}
	}
	if upper || same {
		return true
	}
	for _, w := range [...]string{"password", "passwd", "pass", "secret", "changeme"} {
		if foldAt(p, 0, w, true) == hit && len(p) == len(w) {
			return true
		}
	}
	return false
}

// isScheme reports whether one of schemes ends at b[:e] as a whole word.
func isScheme(b []byte, e int) bool {
	for _, s := range schemes {
		if litBefore(b, e, s) && wordStart(b, e-len(s)) {
			return true
		}
	}
	return false
}

// matchEmail: local@domain, a local part of 1-64 of [A-Za-z0-9._%+-] and a
// domain of at least two labels whose last is 2+ letters; the anchor is '@'.
func matchEmail(b []byte, i int, final bool) (int, int, result) {
	s := i
	for s > 0 && is(b[s-1], cLocal) {
		if _, esc := escBefore(b, s); esc {
			break
		}
		if i-s == 64 {
			return 0, 0, miss
		}
		s--
	}
	if s == i || b[s] == '.' || b[i-1] == '.' || inUserinfo(b, s) {
		return 0, 0, miss
	}
	n, more := run(b, i+1, cHost, 253)
	if more && !final {
		return s, 0, need
	}
	e := i + 1 + n
	for e > i+1 && (b[e-1] == '.' || b[e-1] == '-') {
		e--
	}
	if e-i-1 > 253 || !domain(b[i+1:e]) {
		return 0, 0, miss
	}
	return s, e, hit
}

// domain reports whether d is label(.label)+ with a last label of 2+ letters.
func domain(d []byte) bool {
	dots, last := 0, 0
	for k, c := range d {
		if c == '.' {
			if k == last || d[k-1] == '-' {
				return false
			}
			dots++
			last = k + 1
		} else if c == '-' && k == last {
			return false
		}
	}
	if dots == 0 || len(d)-last < 2 {
		return false
	}
	for _, c := range d[last:] {
		if !is(c, cUpper|cLower) {
			return false
		}
	}
	return true
}

// inUserinfo reports whether b[s] follows "scheme://user:" : the password of
// a URL, not an e-mail local part.
func inUserinfo(b []byte, s int) bool {
	if s == 0 || b[s-1] != ':' {
		return false
	}
	for j := s - 2; j >= 1 && j > s-256; j-- {
		if b[j] == '/' && b[j-1] == '/' {
			return true
		}
		if !is(b[j], cUserinfo) {
			return false
		}
	}
	return false
}
