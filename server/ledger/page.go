package ledger

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"slipstream/pool"
)

// A page is how SQLite stores records: one row of usage_pages holds many
// of them in its records column, a JSON array of arrays, one inner array
// per record with its numColumns values in the order of columns:
//
//	[[1764460800000000,"c9488fec-1","alice",...,""],[...]]
//
// Numbers are JSON integers (booleans 0 or 1, times in microseconds),
// names JSON strings, so that SQLite's own JSON functions read a page (the
// usage_records view does). Writing a record costs an append to a reused
// buffer instead of SQLite's per-row work (record encoding, a B-tree and
// an index insert), which cost more than the request it records.

// Page bounds: a page is cut after pageRecords records or once it holds
// pageBytes, so that a query never decodes a huge value.
const (
	pageRecords = 512
	pageBytes   = 256 << 10
)

// maxText cuts the configuration names a record stores (key, provider,
// credential, ...): longer ones are stored cut, at a whole UTF-8
// character.
const maxText = 512

// errPage reports a page whose records are not the format above.
var errPage = errors.New("a usage page is not an array of records")

// pageWriter appends records as pages. It remembers each name's last
// value and encoding: the records of a batch mostly repeat their key,
// provider, credential, dialects and models, which are then copied rather
// than cut, checked and escaped again. The zero value works; one writer
// reuses it from batch to batch, and it allocates only when a name is
// longer than any before it in its place.
type pageWriter struct {
	memo [numColumns]textMemo // by column
}

// textMemo is a name as given and as appendJSONText appended it.
type textMemo struct {
	in, out []byte
}

// appendPage appends rs as one page (at most pageRecords of them, fewer
// when pageBytes is reached first) and returns the page, how many records
// it holds and their earliest and latest ts.
func (w *pageWriter) appendPage(dst []byte, rs []Record) (page []byte, n int, tsMin, tsMax int64) {
	dst = append(dst, '[')
	tsMin, tsMax = rs[0].Start, rs[0].Start
	for n < len(rs) && n < pageRecords && len(dst) < pageBytes {
		r := &rs[n]
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = w.appendRecord(dst, r)
		tsMin, tsMax = min(tsMin, r.Start), max(tsMax, r.Start)
		n++
	}
	return append(dst, ']'), n, tsMin, tsMax
}

// appendRecord appends r as a page's inner array. Names are cut and made
// valid text as appendJSONText says.
func (w *pageWriter) appendRecord(dst []byte, r *Record) []byte {
	dst = appendSigned(append(dst, '['), r.Start)
	dst = appendJSONText(append(dst, ','), r.ID.b[:r.ID.n], MaxID)
	dst = w.text(dst, 2, pool.S2B(r.Key), maxText)
	dst = w.text(dst, 3, pool.S2B(r.Provider), maxText)
	dst = w.text(dst, 4, pool.S2B(r.Credential), maxText)
	dst = w.text(dst, 5, r.Model.b[:r.Model.n], MaxName)
	dst = w.text(dst, 6, r.UpstreamModel.b[:r.UpstreamModel.n], MaxName)
	dst = w.text(dst, 7, pool.S2B(r.ClientDialect), maxText)
	dst = w.text(dst, 8, pool.S2B(r.UpstreamDialect), maxText)
	dst = w.text(dst, 9, pool.S2B(r.Transport.String()), maxText)
	dst = appendInt(dst, int64(r.Status))
	dst = w.text(dst, 11, pool.S2B(r.Cause), maxText)
	dst = appendInt(dst, r.Input)
	dst = appendInt(dst, r.Output)
	dst = appendInt(dst, r.CacheRead)
	dst = appendInt(dst, r.CacheWrite)
	dst = appendInt(dst, r.Reasoning)
	dst = appendBool(dst, r.Estimated)
	dst = appendInt(dst, r.CostNanoUSD)
	dst = appendBool(dst, r.Priced)
	dst = appendBool(dst, r.APIEquivalent)
	dst = appendInt(dst, r.Latency.Microseconds())
	dst = appendInt(dst, r.TTFT.Microseconds())
	dst = appendInt(dst, r.BytesIn)
	dst = appendInt(dst, r.BytesOut)
	dst = w.text(dst, 25, r.Guardrails.b[:r.Guardrails.n], MaxName)
	return append(dst, ']')
}

// text appends a comma and s as appendJSONText does, from column k's memo
// when s is its last value there.
func (w *pageWriter) text(dst []byte, k int, s []byte, max int) []byte {
	m := &w.memo[k]
	if string(s) == string(m.in) && m.out != nil {
		return append(dst, m.out...)
	}
	start := len(dst)
	dst = appendJSONText(append(dst, ','), s, max)
	m.in = append(m.in[:0], s...)
	m.out = append(m.out[:0], dst[start:]...)
	return dst
}

// appendInt appends a comma and v.
func appendInt(dst []byte, v int64) []byte { return appendSigned(append(dst, ','), v) }

// appendSigned appends v in decimal.
func appendSigned(dst []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(dst, '-'), uint64(-v)) // -MinInt64 is MinInt64: as uint64, right
	}
	return appendUint(dst, uint64(v))
}

// appendUint appends u in decimal. Most numbers of a record have one to
// four digits: each is one append; longer ones go four digits at a time
// (strconv formats into a buffer of its own and copies it).
func appendUint(dst []byte, u uint64) []byte {
	switch {
	case u < 10:
		return append(dst, byte('0'+u))
	case u < 100:
		return append(dst, digitPairs[2*u], digitPairs[2*u+1])
	case u < 1000:
		q := u / 100
		r := 2 * (u - 100*q)
		return append(dst, byte('0'+q), digitPairs[r], digitPairs[r+1])
	case u < 10000:
		return append4(dst, u)
	}
	q := u / 10000
	return append4(appendUint(dst, q), u-10000*q)
}

// append4 appends u < 10000 as four digits, zeros leading.
func append4(dst []byte, u uint64) []byte {
	q := u / 100
	a, b := 2*q, 2*(u-100*q)
	return append(dst, digitPairs[a], digitPairs[a+1], digitPairs[b], digitPairs[b+1])
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// appendBool appends a comma and v as 0 or 1, as SQLite stores a boolean.
func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, ",1"...)
	}
	return append(dst, ",0"...)
}

// appendJSONText appends s as a JSON string, cut to max bytes at a whole
// UTF-8 character and made text either database stores, as clean does:
// valid UTF-8 (a client's model name is not checked on the request path;
// each run of invalid bytes becomes one U+FFFD) and no NUL. Quotes,
// backslashes and control bytes are escaped, so a hostile name stays one
// string of the page.
func appendJSONText(dst, s []byte, max int) []byte {
	s = wholeRunes(s[:min(len(s), max)], max)
	i := plainPrefix(s)
	if i == len(s) {
		return append(append(append(dst, '"'), s...), '"')
	}
	return append(appendJSONTextSlow(append(append(dst, '"'), s[:i]...), s[i:]), '"')
}

// plainPrefix is the length of s's prefix of plain bytes, read eight at a
// time: a word holds no byte to escape or check when none is 0x80 or more,
// under 0x20, a quote or a backslash (each test is the classic "has a
// zero byte" bit trick, exact for the word as a whole).
func plainPrefix(s []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		q, bs := x^(ones*'"'), x^(ones*'\\')
		if (x|(x-ones*0x20)&^x|(q-ones)&^q|(bs-ones)&^bs)&highs != 0 {
			break
		}
	}
	for ; i < len(s) && plain[s[i]]; i++ {
	}
	return i
}

func appendJSONTextSlow(dst, s []byte) []byte {
	invalid := false
	for len(s) > 0 {
		c := s[0]
		if c < utf8.RuneSelf {
			invalid = false
			switch {
			case plain[c]:
				dst = append(dst, c)
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c != 0: // a control byte; NUL is dropped
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n == 1 {
			if !invalid {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			invalid = true
		} else {
			dst = append(dst, s[:n]...)
			invalid = false
		}
		s = s[n:]
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes a JSON string holds as they are: ASCII from 0x20
// but the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
