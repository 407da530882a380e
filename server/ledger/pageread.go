package ledger

import (
	"bytes"
	"strconv"
	"time"

	"slipstream/codec"
	"slipstream/pool"
)

// Reading a page (page.go): its records one at a time, each value a view
// into the page until it is read as a number or text.

// fields are a record's values as raw JSON: numbers as they are written,
// strings with their quotes (see text). They are views into the page.
type fields [numColumns][]byte

// next reads the first record of page into f, in one pass, and returns
// the record (its inner array, brackets included) and the rest of the
// page after it. page starts at the page's opening bracket or at the
// comma or bracket after a record; at the end of the page next returns a
// nil record.
func (f *fields) next(page []byte) (rec, tail []byte, err error) {
	b := skipSpace(page)
	if len(b) == 0 || b[0] != '[' && b[0] != ',' && b[0] != ']' {
		return nil, nil, errPage
	}
	if b[0] == ']' {
		return nil, b[1:], nil
	}
	b = skipSpace(b[1:])
	if len(b) > 0 && b[0] == ']' { // an empty page
		return nil, b[1:], nil
	}
	if len(b) == 0 || b[0] != '[' {
		return nil, nil, errPage
	}
	start := b
	i := 1
	for k := range f {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		v := i
		if i < len(b) && b[i] == '"' {
			end, err := stringEnd(b, i)
			if err != nil {
				return nil, nil, err
			}
			i = end + 1
		}
		for i < len(b) && b[i] != ',' && b[i] != ']' {
			i++
		}
		f[k] = trimSpace(b[v:i])
		if i == len(b) || k < len(f)-1 && b[i] != ',' || k == len(f)-1 && b[i] != ']' {
			return nil, nil, errPage
		}
		i++
	}
	return start[:i], b[i:], nil
}

// stringEnd is the index of the quote that closes the JSON string whose
// opening quote is b[i]: the next quote after an even run of
// backslashes.
func stringEnd(b []byte, i int) (int, error) {
	for i++; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return 0, errPage
		}
		i += q
		bs := 0
		for bs < i && b[i-1-bs] == '\\' {
			bs++
		}
		if bs%2 == 0 {
			return i, nil
		}
		i++
	}
}

// int reads field k as a number: an integer (a boolean 0 or 1), as the
// writer and SQLite's json_array write them; true, false and null are read
// as 1, 0 and 0, a fraction is truncated.
func (f *fields) int(k int) int64 {
	b := f[k]
	if v, ok := atoi(b); ok {
		return v
	}
	switch string(b) {
	case "true":
		return 1
	case "false", "null":
		return 0
	}
	v, err := strconv.ParseFloat(pool.B2S(b), 64)
	if err != nil {
		return 0
	}
	return int64(v)
}

// atoi parses a decimal integer without allocating.
func atoi(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = 10*v + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// text reads field k as text: a view into the page when it holds no
// escape, else the unescaped text appended to scratch. A number reads as
// its digits.
func (f *fields) text(scratch []byte, k int) []byte {
	b := f[k]
	if len(b) < 2 || b[0] != '"' {
		if string(b) == "null" {
			return nil
		}
		return b
	}
	b = b[1 : len(b)-1]
	for i, c := range b {
		if c == '\\' {
			return unescape(append(scratch, b[:i]...), b[i:])
		}
	}
	return b
}

// unescape appends the JSON string content s (without quotes) unescaped
// (codec.AppendUnescaped: a lone surrogate becomes U+FFFD). A malformed
// escape, which neither this package nor SQLite's JSON functions write,
// leaves s as written.
func unescape(dst, s []byte) []byte {
	out, err := codec.AppendUnescaped(dst, s)
	if err != nil {
		return append(dst, s...)
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func skipSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return skipSpace(b)
}

// entry reads a whole record; its strings are copies.
func (f *fields) entry(e *Entry, scratch []byte) {
	str := func(k int) string { return string(f.text(scratch[:0], k)) }
	*e = Entry{
		ID: str(1), Key: str(2), Provider: str(3), Credential: str(4), Model: str(5), UpstreamModel: str(6),
		ClientDialect: str(7), UpstreamDialect: str(8), Transport: str(9), Status: int(f.int(10)), Cause: str(11),
		Input: f.int(12), Output: f.int(13), CacheRead: f.int(14), CacheWrite: f.int(15), Reasoning: f.int(16),
		Estimated: f.int(17) != 0, CostNanoUSD: f.int(18), Priced: f.int(19) != 0, APIEquivalent: f.int(20) != 0,
		BytesIn: f.int(23), BytesOut: f.int(24), Guardrails: str(25),
	}
	e.Time = time.UnixMicro(f.int(0)).UTC()
	e.Latency = time.Duration(f.int(21)) * time.Microsecond
	e.TTFT = time.Duration(f.int(22)) * time.Microsecond
}
