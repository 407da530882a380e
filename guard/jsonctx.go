package guard

import "bytes"

// jsonCtx follows the string structure of a raw JSON body forward, lazily:
// it reads only as far as the last match asked about, so a body without
// matches is never walked.
type jsonCtx struct {
	pos   int  // bytes before pos are classified
	in    bool // pos is inside a string
	close int  // when in and > 0: the closing quote of the current string
}

// within reports whether [s, e) lies inside one string value of b (not a
// member name). Calls must come in increasing s.
func (c *jsonCtx) within(b []byte, s, e int) bool {
	c.advance(b, s)
	if !c.in {
		return false
	}
	if c.close <= 0 {
		c.close = closingQuote(b, s)
	}
	if e > c.close {
		return false
	}
	k := c.close + 1
	for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
		k++
	}
	return k >= len(b) || b[k] != ':'
}

// advance classifies b[c.pos:s].
func (c *jsonCtx) advance(b []byte, s int) {
	for c.pos < s {
		q := bytes.IndexByte(b[c.pos:s], '"')
		if q < 0 {
			c.pos = s
			return
		}
		q += c.pos
		c.pos = q + 1
		if c.in && escapedAt(b, q) {
			continue
		}
		c.in = !c.in
		c.close = 0
	}
}

// closingQuote returns the index of the unescaped quote that ends the string
// containing b[s], or len(b).
func closingQuote(b []byte, s int) int {
	for k := s; k < len(b); {
		q := bytes.IndexByte(b[k:], '"')
		if q < 0 {
			return len(b)
		}
		q += k
		if !escapedAt(b, q) {
			return q
		}
		k = q + 1
	}
	return len(b)
}
