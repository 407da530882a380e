package guard

import "bytes"

// jsonCtx follows the string structure of a raw JSON body forward, lazily:
// it reads only as far as the last match asked about, so a body without
// matches is never walked.
type jsonCtx struct {
	pos   int  // bytes before pos are classified
	in    bool // pos is inside a string
	open  int  // when in: the opening quote of the current string
	close int  // when in and > 0: the closing quote of the current string
	// judged: skip holds whether the current string is a member name or
	// an opaque value, decided once per string (a long value may hold many
	// matches).
	judged, skip bool
}

// opaque are the members whose base64 values are never redacted: replay
// tokens a provider checks byte for byte (Anthropic's thinking signatures
// and redacted thinking, Responses' encrypted reasoning, Gemini's thought
// signatures) and base64 data (images, documents): a secret in them is
// encoded, and a match there is noise whose redaction would break the turn
// or the file. A value counts as base64 when it holds at least minOpaque
// bytes and nothing but base64 (or base64url) characters: a tool argument
// that happens to be named data, or a text document's data, is scanned
// like any string.
var opaque = []string{"signature", "data", "encrypted_content", "thoughtSignature", "thought_signature"}

// minOpaque is the shortest value opaque skips; the detectors' keys are
// shorter, replay tokens and file data far longer.
const minOpaque = 256

// within reports whether [s, e) lies inside one string value of b (not a
// member name, nor the value of an opaque member). Calls must come in
// increasing s.
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
	if !c.judged {
		c.judged, c.skip = true, isName(b, c.close) || isOpaqueValue(b, c.open, c.close)
	}
	return !c.skip
}

// isName reports whether the string that closes at b[close] is a member
// name: a colon follows it.
func isName(b []byte, close int) bool {
	k := close + 1
	for k < len(b) && isSpace(b[k]) {
		k++
	}
	return k < len(b) && b[k] == ':'
}

// isOpaqueValue reports whether the string b[open:close+1] is the base64
// value of an opaque member.
func isOpaqueValue(b []byte, open, close int) bool {
	name, ok := memberOf(b, open)
	return ok && isOpaque(name) && isBase64(b[open+1:close])
}

// isBase64 reports whether raw string content v is at least minOpaque
// bytes of base64: A-Z a-z 0-9 + / - _ =, a slash possibly escaped.
func isBase64(v []byte) bool {
	if len(v) < minOpaque {
		return false
	}
	for k := 0; k < len(v); k++ {
		c := v[k]
		if c == '\\' && k+1 < len(v) && v[k+1] == '/' {
			k++
			continue
		}
		if !is(c, cURL64|cB64) && c != '=' {
			return false
		}
	}
	return true
}

func isOpaque(name []byte) bool {
	for _, o := range opaque {
		if string(name) == o {
			return true
		}
	}
	return false
}

// memberOf returns the name of the member whose value is the string that
// opens at b[open], and false when that string is not a member's value.
func memberOf(b []byte, open int) ([]byte, bool) {
	k := open - 1
	for k >= 0 && isSpace(b[k]) {
		k--
	}
	if k < 0 || b[k] != ':' {
		return nil, false
	}
	k--
	for k >= 0 && isSpace(b[k]) {
		k--
	}
	if k < 0 || b[k] != '"' {
		return nil, false
	}
	end := k
	for k--; k >= 0; k-- {
		if b[k] == '"' && !escapedAt(b, k) {
			return b[k+1 : end], true
		}
	}
	return nil, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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
		c.open, c.close, c.judged = q, 0, false
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
