package guard

// Byte classes shared by the matchers. A class is a bit in classTable, so a
// membership test is one load and one AND.
const (
	cUpper    uint16 = 1 << iota // A-Z
	cLower                       // a-z
	cDigit                       // 0-9
	cB32                         // A-Z2-7 (AWS key id body)
	cB64                         // A-Za-z0-9+/
	cURL64                       // A-Za-z0-9_-
	cHex                         // 0-9a-f
	cBreak                       // bytes no single-word match contains (see isBreak)
	cPEM                         // bytes a PEM body may hold besides escapes
	cLocal                       // e-mail local part: A-Za-z0-9._%+-
	cHost                        // host name: A-Za-z0-9.-
	cUserinfo                    // URL user or password byte (anything but breaks and @/?#)
	cWord                        // A-Za-z0-9_
	cHdr                         // A-Z and space (PEM header words)
	cDash                        // -
)

const cAlnum = cUpper | cLower | cDigit

var classTable = func() (t [256]uint16) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case b >= 'A' && b <= 'Z':
			t[c] |= cUpper | cB32 | cB64 | cURL64 | cPEM | cLocal | cHost | cUserinfo
		case b >= 'a' && b <= 'z':
			t[c] |= cLower | cB64 | cURL64 | cPEM | cLocal | cHost | cUserinfo
			if b <= 'f' {
				t[c] |= cHex
			}
		case b >= '0' && b <= '9':
			t[c] |= cDigit | cB64 | cURL64 | cPEM | cLocal | cHost | cUserinfo | cHex
			if b >= '2' && b <= '7' {
				t[c] |= cB32
			}
		}
	}
	for c := 0; c < 256; c++ {
		if t[c]&(cUpper|cLower|cDigit) != 0 || c == '_' {
			t[c] |= cWord
		}
		if t[c]&cUpper != 0 || c == ' ' {
			t[c] |= cHdr
		}
	}
	for _, b := range []byte("+/") {
		t[b] |= cB64 | cPEM
	}
	for _, b := range []byte("_-") {
		t[b] |= cURL64
	}
	t['-'] |= cDash
	for _, b := range []byte("=:,- ") {
		t[b] |= cPEM
	}
	for _, b := range []byte("._%+-") {
		t[b] |= cLocal
	}
	for _, b := range []byte(".-") {
		t[b] |= cHost
	}
	// Breaks: whitespace, quotes, the JSON escape introducer and bracketing
	// punctuation. The streaming scanners hold back the bytes after the last
	// break of a delta, so no single-word detector may match across one.
	for _, b := range []byte(" \t\r\n\"'`\\<>()[]{},;|") {
		t[b] |= cBreak
	}
	for c := 0x21; c < 0x7f; c++ {
		if t[c]&cBreak == 0 && c != '@' && c != '/' && c != '?' && c != '#' {
			t[c] |= cUserinfo
		}
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] |= cUserinfo
	}
	return t
}()

func is(c byte, class uint16) bool { return classTable[c]&class != 0 }

// escapedAt reports whether b[i] is the letter of a JSON escape (it follows
// an odd run of backslashes), so that "\nAKIA..." starts a word at 'A'.
func escapedAt(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n&1 == 1
}

// wordStart reports whether a match may start at i: the byte before is not
// a word byte [A-Za-z0-9_], or it ends an escape that is not one: \n (at any
// level: \\n in JSON inside a string), \u003c.
func wordStart(b []byte, i int) bool {
	if i == 0 {
		return true
	}
	if !is(b[i-1], cWord) {
		return true
	}
	r, ok := escBefore(b, i)
	return ok && !(r < 0x80 && is(byte(r), cWord))
}

// escBefore reports whether b[i-1] ends a JSON escape (a backslash and a
// letter, or \uXXXX) and returns the escaped rune (-1 for a letter escape:
// a control character or a doubled backslash's letter).
func escBefore(b []byte, i int) (rune, bool) {
	if i >= 2 && b[i-2] == '\\' {
		return -1, true
	}
	if i >= 6 && b[i-5] == 'u' && b[i-6] == '\\' {
		if r, ok := hex4(b[i-6 : i]); ok {
			return r, true
		}
	}
	return 0, false
}

// run counts bytes of class from b[i], at most max+1 of them. more reports
// that the input ended inside the run before max+1 bytes were seen, so more
// input could lengthen it.
func run(b []byte, i int, class uint16, max int) (n int, more bool) {
	end := min(len(b), i+max+1)
	j := i
	for j < end && classTable[b[j]]&class != 0 {
		j++
	}
	return j - i, j == len(b) && j-i <= max
}

// litAt compares b[i:] with s. It returns hit when s is there, miss when a
// byte differs or (final) the input is too short, and need when the input
// ends inside s with every byte so far equal.
func litAt(b []byte, i int, s string, final bool) result {
	n := min(len(b)-i, len(s))
	if n < 0 {
		return miss
	}
	if string(b[i:i+n]) != s[:n] {
		return miss
	}
	if n == len(s) {
		return hit
	}
	if final {
		return miss
	}
	return need
}

// litBefore reports whether b[i-len(s):i] == s.
func litBefore(b []byte, i int, s string) bool {
	return i >= len(s) && string(b[i-len(s):i]) == s
}

// foldAt is litAt ignoring ASCII case; s is lower case.
func foldAt(b []byte, i int, s string, final bool) result {
	for k := 0; k < len(s); k++ {
		if i+k >= len(b) {
			if final {
				return miss
			}
			return need
		}
		c := b[i+k]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[k] {
			return miss
		}
	}
	return hit
}

// result is what a matcher found at a candidate.
type result uint8

const (
	miss result = iota // no match here
	hit                // a match [start, end)
	need               // the input ended while a match was still possible
)

// fixedRun matches exactly n bytes of class at b[j:], not followed by a byte
// of stop. It returns the end of the run.
func fixedRun(b []byte, j, n int, class, stop uint16, final bool) (int, result) {
	k, more := run(b, j, class, n-1)
	if k < n {
		if more && !final {
			return 0, need
		}
		return 0, miss
	}
	e := j + n
	if e == len(b) {
		if final {
			return e, hit
		}
		return 0, need
	}
	if is(b[e], stop) {
		return 0, miss
	}
	return e, hit
}

// varRun matches lo..hi bytes of class at b[j:], not followed by a byte of
// stop (a run longer than hi is no match).
func varRun(b []byte, j, lo, hi int, class, stop uint16, final bool) (int, result) {
	k, more := run(b, j, class, hi)
	if more && !final {
		return 0, need
	}
	if k < lo || k > hi {
		return 0, miss
	}
	e := j + k
	if e < len(b) && is(b[e], stop) {
		return 0, miss
	}
	return e, hit
}

// slashLitBefore reports whether s ends at b[:i], each '/' of s possibly
// written \/ (encoders that escape slashes), and returns where it starts.
func slashLitBefore(b []byte, i int, s string) (int, bool) {
	j := i
	for k := len(s) - 1; k >= 0; k-- {
		if j == 0 || b[j-1] != s[k] {
			return 0, false
		}
		j--
		if s[k] == '/' && j > 0 && b[j-1] == '\\' {
			j--
		}
	}
	return j, true
}

// slashLitAt is litAt where each '/' of s may be written \/; it returns the
// end on hit.
func slashLitAt(b []byte, i int, s string, final bool) (int, result) {
	j := i
	for k := 0; k < len(s); k++ {
		if j < len(b) && s[k] == '/' && b[j] == '\\' {
			j++
		}
		if j == len(b) {
			if final {
				return 0, miss
			}
			return 0, need
		}
		if b[j] != s[k] {
			return 0, miss
		}
		j++
	}
	return j, hit
}

// b64Exact matches exactly n base64 characters at b[j:], a '/' possibly
// written \/, and (stop) not followed by another. It returns the end.
func b64Exact(b []byte, j, n int, stop, final bool) (int, result) {
	for k := 0; k <= n; k++ {
		if j == len(b) {
			if final && k == n {
				return j, hit
			}
			if final {
				return 0, miss
			}
			return 0, need
		}
		c := b[j]
		w := 1
		if c == '\\' {
			if j+1 == len(b) {
				if final && k == n {
					return j, hit
				}
				if final {
					return 0, miss
				}
				return 0, need
			}
			if b[j+1] != '/' {
				if k == n {
					return j, hit
				}
				return 0, miss
			}
			w = 2
		} else if !is(c, cB64) {
			if k == n {
				return j, hit
			}
			return 0, miss
		}
		if k == n {
			if stop {
				return 0, miss
			}
			return j, hit
		}
		j += w
	}
	return j, hit
}
