package codec

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"slipstream/pool"
)

// ErrBadEscape reports a malformed escape sequence in JSON string content.
var ErrBadEscape = errors.New("malformed JSON string escape")

const hexDigits = "0123456789abcdef"

// AppendQuoted appends s to dst as a JSON string literal, quotes included.
func AppendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendQuotedString is AppendQuoted for a string.
func AppendQuotedString(dst []byte, s string) []byte {
	return AppendQuoted(dst, pool.S2B(s))
}

// AppendEscaped appends s escaped as JSON string content, without quotes.
// Bytes that need no escaping are appended in runs, so plain text costs one
// copy. Invalid UTF-8 becomes U+FFFD, as encoding/json does.
func AppendEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			dst = appendEscapedByte(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if r == utf8.RuneError {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

func appendEscapedByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// AppendUnescaped appends the bytes that JSON string content esc (no quotes)
// stands for. It returns ErrBadEscape, with dst as far as it got, when esc
// is malformed.
func AppendUnescaped(dst, esc []byte) ([]byte, error) {
	for i := 0; i < len(esc); {
		j := i
		for j < len(esc) && esc[j] != '\\' {
			j++
		}
		dst = append(dst, esc[i:j]...)
		if j == len(esc) {
			return dst, nil
		}
		var err error
		dst, i, err = appendEscapeSeq(dst, esc, j)
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendEscapeSeq decodes the escape at esc[i] (a backslash) and returns the
// index after it.
func appendEscapeSeq(dst, esc []byte, i int) ([]byte, int, error) {
	if i+1 >= len(esc) {
		return dst, i, ErrBadEscape
	}
	switch c := esc[i+1]; c {
	case '"', '\\', '/':
		return append(dst, c), i + 2, nil
	case 'b':
		return append(dst, '\b'), i + 2, nil
	case 'f':
		return append(dst, '\f'), i + 2, nil
	case 'n':
		return append(dst, '\n'), i + 2, nil
	case 'r':
		return append(dst, '\r'), i + 2, nil
	case 't':
		return append(dst, '\t'), i + 2, nil
	case 'u':
		r, ok := hex4(esc, i+2)
		if !ok {
			return dst, i, ErrBadEscape
		}
		n := i + 6
		if r >= 0xd800 && r < 0xdc00 {
			if lo, ok := hex4(esc, i+8); ok && n+1 < len(esc) && esc[n] == '\\' && esc[n+1] == 'u' && lo >= 0xdc00 && lo < 0xe000 {
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				n += 6
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.AppendRune(dst, r), n, nil
	}
	return dst, i, ErrBadEscape
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// AppendInt appends n in decimal.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// Get runs a gjson path over body without copying it. The Result's Raw and
// Str may alias body: do not modify body while the Result is in use.
func Get(body []byte, path string) gjson.Result { return gjson.Get(pool.B2S(body), path) }

// Content returns the escaped content (no quotes) of a JSON string result
// as a view into the document it came from, or nil when r is not a string.
func Content(r gjson.Result) []byte {
	if r.Type != gjson.String || len(r.Raw) < 2 {
		return nil
	}
	return pool.S2B(r.Raw[1 : len(r.Raw)-1])
}

// Raw returns r's raw JSON as a view into the document it came from, or nil
// when r does not exist.
func Raw(r gjson.Result) []byte {
	if !r.Exists() {
		return nil
	}
	return pool.S2B(r.Raw)
}

// AppendString appends a JSON string literal whose content is the already
// escaped esc.
func AppendString(dst, esc []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, esc...)
	return append(dst, '"')
}

// AppendJoined appends one JSON string literal holding the escaped pieces
// joined by the escaped separator sep (for example `\n\n`).
func AppendJoined(dst []byte, pieces [][]byte, sep string) []byte {
	dst = append(dst, '"')
	for i, p := range pieces {
		if i > 0 {
			dst = append(dst, sep...)
		}
		dst = append(dst, p...)
	}
	return append(dst, '"')
}

// Compact appends raw JSON without insignificant whitespace. The input must
// be valid JSON.
func Compact(dst, raw []byte) []byte {
	inStr := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inStr {
			dst = append(dst, c)
			if c == '\\' && i+1 < len(raw) {
				i++
				dst = append(dst, raw[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inStr = true
		}
		dst = append(dst, c)
	}
	return dst
}

// clipLen is how much of a foreign body an error message may quote.
const clipLen = 256

// AppendClipped appends at most the first 256 bytes of b as escaped JSON
// string content, for quoting bad input in an error message.
func AppendClipped(dst, b []byte) []byte {
	if len(b) > clipLen {
		return append(AppendEscaped(dst, b[:clipLen]), "..."...)
	}
	return AppendEscaped(dst, b)
}

// NoMessage is the message of an upstream error whose body said nothing
// readable.
var NoMessage = []byte("upstream returned an error without a message")
