package codec

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"slipstream/pool"
)

// maxDepth bounds nesting, as encoding/json does; deeper input is invalid.
const maxDepth = 10000

// Valid reports whether b is one JSON value (RFC 8259) surrounded by
// optional whitespace, with every string valid UTF-8. It is what the
// server checks every body with before anything else reads it, so it is
// built for the common case: string content, which is most of a request,
// is skipped eight bytes at a time until a quote, a backslash, a control
// byte or a non-ASCII byte appears. It allocates nothing.
func Valid(b []byte) bool {
	i, ok := validValue(b, SkipWS(b, 0), 0, true, nil)
	return ok && SkipWS(b, i) == len(b)
}

// ValidShape is Valid without looking inside strings: it checks the
// structure (objects, arrays, numbers, literals, where every string ends)
// but not escapes, control bytes or UTF-8 in string content. It is what
// the same-dialect path needs before it reads a few members and relays
// the body byte for byte: string content is the upstream's to judge, and
// skipping it runs at memchr speed. Readers built on Members, Member and
// gjson stay safe on such input: they find string ends the same way.
func ValidShape(b []byte) bool {
	i, ok := validValue(b, SkipWS(b, 0), 0, false, nil)
	return ok && SkipWS(b, i) == len(b)
}

// ValidShapeTop is ValidShape for a body that must be an object, which
// also returns, in the same pass, the raw values of the top-level members
// named keys: vals[i] is the value of keys[i], or nil (each a view into b).
// len(vals) must be len(keys), at most 64. A proxy that needs two members
// of a 1 MB body then reads it once instead of twice.
//
// dup is the index of the first of keys named by more than one member, or
// -1. Member names are compared as a JSON parser reads them: after
// unescaping ("mod\u0065l" is "model"), and a name that equals a key but
// for case counts as a second occurrence too (encoding/json matches names
// case-insensitively, and the last one wins), so a body cannot route on
// one value while its upstream reads another. vals holds the first exact
// occurrence. Names without backslashes or non-ASCII bytes, the common
// case, are compared as they are.
func ValidShapeTop(b []byte, keys []string, vals [][]byte) (dup int, ok bool) {
	return validTop(b, keys, vals, false, nil)
}

// OriginTagPrefix is what every origin tag starts with: the prefix
// slipstream puts on a replay token (a thinking signature, an encrypted
// reasoning item) it relays into another vendor's dialect, so that it
// knows the token's producer when a client sends it back.
const OriginTagPrefix = "SsOr"

// MayHoldOriginTag reports whether b, raw JSON, may hold a string whose
// content starts with OriginTagPrefix: false only when no quote in b is
// followed by the prefix. It is for bytes already checked, whose shape
// pass (ValidShapeTopTagged) is not run again; a false positive costs the
// caller a pass that finds no tag.
func MayHoldOriginTag(b []byte) bool { return bytes.Contains(b, quotedOriginTag) }

var quotedOriginTag = []byte(`"` + OriginTagPrefix)

// ValidShapeTopTagged is ValidShapeTop that also reports, in the same
// pass, whether b holds a string value whose raw content starts with
// OriginTagPrefix: where a replay token slipstream tagged comes back (a
// member's value or an array element, never a member name, never inside
// another string). It costs one compare per string value, so a
// same-dialect body needs no second scan to know whether its replay
// tokens must be sorted. tagged is meaningful only when ok.
func ValidShapeTopTagged(b []byte, keys []string, vals [][]byte) (dup int, tagged, ok bool) {
	dup, ok = validTop(b, keys, vals, false, &tagged)
	return dup, tagged, ok
}

// ValidTop is ValidShapeTop with strings checked too, as Valid does: for
// input whose string content slipstream re-emits in another dialect
// (upstream responses and stream events), where content that is not valid
// JSON would make the client's output invalid. Repeated members are not
// reported: vals holds the first.
func ValidTop(b []byte, keys []string, vals [][]byte) bool {
	_, ok := validTop(b, keys, vals, true, nil)
	return ok
}

// validTop is ValidShapeTop and ValidTop. tagged, when not nil, is set
// when a string value starts with OriginTagPrefix.
func validTop(b []byte, keys []string, vals [][]byte, strict bool, tagged *bool) (dup int, ok bool) {
	clear(vals)
	dup = -1
	var seen uint64 // bit k: a member named keys[k] (exactly or folded) was seen
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return dup, false
	}
	i = SkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return dup, SkipWS(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return dup, false
		}
		ks := i + 1
		if i, ok = validString(b, ks, strict); !ok {
			return dup, false
		}
		key := b[ks : i-1]
		i = SkipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return dup, false
		}
		vs := SkipWS(b, i+1)
		if i, ok = validValue(b, vs, 1, strict, tagged); !ok {
			return dup, false
		}
		slow := escapedOrWide(key)
		for k := range keys {
			exact, folded := memberIs(key, keys[k], slow)
			if !folded {
				continue
			}
			if seen&(1<<k) != 0 && dup < 0 {
				dup = k
			}
			seen |= 1 << k
			if exact && vals[k] == nil {
				vals[k] = b[vs:i]
			}
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return dup, false
		}
		switch b[i] {
		case '}':
			return dup, SkipWS(b, i+1) == len(b)
		case ',':
			i = SkipWS(b, i+1)
		default:
			return dup, false
		}
	}
}

// escapedOrWide reports whether a raw member name needs the slow comparison:
// it holds an escape or a non-ASCII byte.
func escapedOrWide(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// MemberIs reports whether the raw member name key (escaped content, no
// quotes) names k exactly, and whether it does ignoring case, as
// ValidShapeTop compares names: after unescaping, a name equal but for
// case counting as another occurrence of k.
func MemberIs(key []byte, k string) (exact, folded bool) {
	return memberIs(key, k, escapedOrWide(key))
}

// memberIs reports whether the raw member name key names k exactly, and
// whether it does ignoring case (folded is true when exact is). slow says
// key has escapes or non-ASCII bytes (escapedOrWide).
func memberIs(key []byte, k string, slow bool) (exact, folded bool) {
	if !slow {
		if len(key) != len(k) {
			return false, false
		}
		if string(key) == k {
			return true, true
		}
		return false, asciiEqualFold(key, k)
	}
	return memberIsSlow(key, k)
}

func memberIsSlow(key []byte, k string) (exact, folded bool) {
	var buf [64]byte
	name, err := AppendUnescaped(buf[:0], key)
	if err != nil {
		return false, false // not JSON; the upstream rejects the body
	}
	if string(name) == k {
		return true, true
	}
	return false, bytes.EqualFold(name, pool.S2B(k))
}

func asciiEqualFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// validValue checks the value starting at b[i] and returns the index after it.
// tagged is as in validTop: the opening quote of a string value is the one
// place a tag is looked for.
func validValue(b []byte, i, depth int, strict bool, tagged *bool) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		if tagged != nil && tagAt(b, i+1) {
			*tagged = true
		}
		return validString(b, i+1, strict)
	case c == '{':
		return validObject(b, i+1, depth+1, strict, tagged)
	case c == '[':
		return validArray(b, i+1, depth+1, strict, tagged)
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(b, i)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func validObject(b []byte, i, depth int, strict bool, tagged *bool) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = SkipWS(b, i)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = validString(b, i+1, strict); !ok {
			return i, false
		}
		i = SkipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		if i, ok = validValue(b, SkipWS(b, i+1), depth, strict, tagged); !ok {
			return i, false
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '}':
			return i + 1, true
		case ',':
			i = SkipWS(b, i+1)
		default:
			return i, false
		}
	}
}

func validArray(b []byte, i, depth int, strict bool, tagged *bool) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = SkipWS(b, i)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = validValue(b, i, depth, strict, tagged); !ok {
			return i, false
		}
		i = SkipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ']':
			return i + 1, true
		case ',':
			i = SkipWS(b, i+1)
		default:
			return i, false
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain reports whether none of the 8 bytes in w is a quote, a backslash,
// a control byte (< 0x20) or non-ASCII (>= 0x80): the bytes a string
// scanner must look at.
func plain(w uint64) bool {
	quote := w ^ ('"' * lsb)
	bslash := w ^ ('\\' * lsb)
	special := (quote - lsb) &^ quote // a zero byte: a quote
	special |= (bslash - lsb) &^ bslash
	special |= w - 0x20*lsb // borrows below 0x20 (w has no high bits here)
	return (special|w)&msb == 0
}

// Byte classes inside a string.
const (
	strPlain = iota
	strQuote
	strEscape
	strControl
	strMultibyte
)

var strClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"':
			t[c] = strQuote
		case c == '\\':
			t[c] = strEscape
		case c < 0x20:
			t[c] = strControl
		case c >= utf8.RuneSelf:
			t[c] = strMultibyte
		}
	}
	return t
}()

// validString checks string content from b[i] (after the opening quote)
// and returns the index after the closing quote.
func validString(b []byte, i int, strict bool) (int, bool) {
	if !strict {
		return stringShape(b, i)
	}
	for {
		for i+8 <= len(b) && plain(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && strClass[b[i]] == strPlain {
			i++
		}
		if i >= len(b) {
			return i, false
		}
		switch strClass[b[i]] {
		case strQuote:
			return i + 1, true
		case strEscape:
			var ok bool
			if i, ok = validEscape(b, i+1); !ok {
				return i, false
			}
		case strControl:
			return i, false
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return i, false
			}
			i += n
		}
	}
}

func validEscape(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 1, true
	case 'u':
		if _, ok := hex4(b, i+1); ok {
			return i + 5, true
		}
	}
	return i, false
}

func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// stringShape finds the quote that closes the string whose content starts
// at b[i]: the first quote not escaped by an odd run of backslashes. It
// uses bytes.IndexByte, which scans many bytes per instruction.
func stringShape(b []byte, i int) (int, bool) {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b), false
		}
		j := i + q
		k := j
		for k > i && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j + 1, true
		}
		i = j + 1
	}
}

// tagAt reports whether b[i:] starts with OriginTagPrefix.
func tagAt(b []byte, i int) bool {
	return len(b)-i >= len(OriginTagPrefix) && string(b[i:i+len(OriginTagPrefix)]) == OriginTagPrefix
}
