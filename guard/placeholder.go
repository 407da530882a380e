package guard

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"hash"

	"slipstream/pool"
)

// A placeholder is [REDACTED:<rule>:<6 hex>]: ASCII with nothing to escape in
// JSON, so it splices into any string. The hex is the first 3 bytes of
// HMAC-SHA256(key, rule "\x00" value), value unescaped: the same secret gets
// the same placeholder (a provider's prompt cache keeps hitting across
// turns), different secrets almost always differ (24 bits), and without the
// key nobody can test a guess against a placeholder.
const (
	placeholderPrefix = "[REDACTED:"
	hashHex           = 6
	maxPlaceholder    = len(placeholderPrefix) + maxRuleName + 1 + hashHex + 1
)

// HasPlaceholder reports whether JSON text b may hold a placeholder: its
// prefix is in b as is, since a placeholder has nothing to escape. A
// false answer is certain; a true one is for a Restorer to confirm.
func HasPlaceholder(b []byte) bool {
	return bytes.Contains(b, []byte(placeholderPrefix))
}

type hasher struct {
	h   hash.Hash
	sum [sha256.Size]byte
	val []byte // scratch: the unescaped value
	sep [1]byte
}

func newHasher(key []byte) any { return &hasher{h: hmac.New(sha256.New, key)} }

// AppendPlaceholder appends the placeholder of value (raw JSON string
// content, as scanned) under rule.
func (s *Set) AppendPlaceholder(dst []byte, rule string, value []byte) []byte {
	h := s.hashers.Get().(*hasher)
	dst = h.appendPlaceholder(dst, rule, value)
	s.hashers.Put(h)
	return dst
}

func (h *hasher) appendPlaceholder(dst []byte, rule string, raw []byte) []byte {
	h.val = appendUnescaped(h.val[:0], raw)
	h.h.Reset()
	h.h.Write(pool.S2B(rule))
	h.sep[0] = 0
	h.h.Write(h.sep[:])
	h.h.Write(h.val)
	sum := h.h.Sum(h.sum[:0])
	dst = append(dst, placeholderPrefix...)
	dst = append(dst, rule...)
	dst = append(dst, ':')
	for _, c := range sum[:hashHex/2] {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return append(dst, ']')
}

// placeholderAt parses a placeholder at b[i] ('['). It returns its end on
// hit, need when b ends inside something that may still become one.
func placeholderAt(b []byte, i int) (int, result) {
	if r := litAt(b, i, placeholderPrefix, false); r != hit {
		return 0, r
	}
	j := i + len(placeholderPrefix)
	n := 0
	for ; j < len(b) && n <= maxRuleName; j++ {
		c := b[j]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			break
		}
		n++
	}
	if j == len(b) && n <= maxRuleName {
		return 0, need
	}
	if n == 0 || n > maxRuleName || b[j] != ':' {
		return 0, miss
	}
	j++
	for k := 0; k < hashHex; k, j = k+1, j+1 {
		if j == len(b) {
			return 0, need
		}
		if !is(b[j], cHex) || is(b[j], cUpper) {
			return 0, miss
		}
	}
	if j == len(b) {
		return 0, need
	}
	if b[j] != ']' {
		return 0, miss
	}
	return j + 1, hit
}
