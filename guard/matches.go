package guard

import "sync"

// Matches holds what a scan found: spans of the scanned bytes and their
// rules. Acquire one with AcquireMatches, reuse it across scans (each scan
// resets it) and Release it.
type Matches struct {
	set     *Set
	spans   []span
	block   int // index in spans of the first Block match, -1 when none
	redacts int // Redact matches
	ctx     jsonCtx
	cand    []int                  // scan scratch: anchor candidates
	masks   *[maskBlocks]blockMask // scan scratch: anchorMasks' output, made on first use
}

type span struct {
	s, e   int
	anchor int // where the scan found it
	rule   uint16
}

// Hit describes one match. Start and End index the scanned bytes; Rule is
// the rule's name (static, safe to keep). The matched value itself is never
// part of a Hit, so a Hit may be logged.
type Hit struct {
	Rule       string
	Action     Action
	Start, End int
}

var matchesPool = sync.Pool{New: func() any { return &Matches{block: -1} }}

// AcquireMatches returns an empty Matches from a pool.
func AcquireMatches() *Matches { return matchesPool.Get().(*Matches) }

// ReleaseMatches resets m and returns it to the pool; m must not be used
// after.
func ReleaseMatches(m *Matches) {
	m.Reset()
	if cap(m.spans) > 1024 {
		m.spans = nil
	}
	matchesPool.Put(m)
}

// Reset drops the matches and keeps the capacity.
func (m *Matches) Reset() {
	m.set = nil
	m.spans = m.spans[:0]
	m.block = -1
	m.redacts = 0
	m.ctx = jsonCtx{}
}

// Len is the number of matches.
func (m *Matches) Len() int { return len(m.spans) }

// Hit returns match k (0 <= k < Len), in input order.
func (m *Matches) Hit(k int) Hit {
	sp := m.spans[k]
	r := m.set.rules[sp.rule]
	return Hit{Rule: r.name, Action: r.action, Start: sp.s, End: sp.e}
}

// Blocked returns the rule of the first Block match, if any: the request
// must be refused naming that rule.
func (m *Matches) Blocked() (rule string, ok bool) {
	if m.block < 0 {
		return "", false
	}
	return m.set.rules[m.spans[m.block].rule].name, true
}

// Redacts is the number of Redact matches; with none, AppendRedacted would
// copy the input unchanged, so the caller keeps it as is.
func (m *Matches) Redacts() int { return m.redacts }

// AppendRules appends the distinct rule names of the matches, comma
// separated, in order of first match: the access log's guardrails field.
func (m *Matches) AppendRules(dst []byte) []byte {
	n := 0
	for k, sp := range m.spans {
		seen := false
		for _, p := range m.spans[:k] {
			if p.rule == sp.rule {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.set.rules[sp.rule].name...)
		n++
	}
	return dst
}

func (m *Matches) add(s, e int, rule uint16, anchor int) {
	m.spans = append(m.spans, span{s: s, e: e, rule: rule, anchor: anchor})
}

// finish sorts the spans, drops those outside a JSON string value (body
// scans), those that split an escape and those that overlap an earlier one,
// and counts actions.
func (m *Matches) finish(b []byte, body bool) {
	sortSpans(m.spans)
	out := m.spans[:0]
	end := 0
	for _, sp := range m.spans {
		if sp.s < end || splitsEscape(b, sp.s) || splitsEscape(b, sp.e) {
			continue
		}
		if body && !m.ctx.within(b, sp.s, sp.e) {
			continue
		}
		out = append(out, sp)
		end = sp.e
	}
	m.spans = out
	m.count()
}

func (m *Matches) count() {
	m.block, m.redacts = -1, 0
	for k, sp := range m.spans {
		switch m.set.rules[sp.rule].action {
		case Block:
			if m.block < 0 {
				m.block = k
			}
		case Redact:
			m.redacts++
		}
	}
}

// sortSpans is an insertion sort by start: spans come nearly sorted (the
// built-in scan is in order; patterns and literals are appended after).
func sortSpans(sp []span) {
	for k := 1; k < len(sp); k++ {
		for j := k; j > 0 && sp[j].s < sp[j-1].s; j-- {
			sp[j], sp[j-1] = sp[j-1], sp[j]
		}
	}
}

// splitsEscape reports whether a cut before b[p] falls inside a JSON escape
// (\n or \u00e9), which a placeholder must not do.
func splitsEscape(b []byte, p int) bool {
	if p <= 0 || p >= len(b) {
		return false
	}
	if escapedAt(b, p) {
		return true
	}
	for k := 1; k <= 4 && p-k >= 0; k++ {
		if b[p-k] == 'u' && escapedAt(b, p-k) {
			return true
		}
	}
	return false
}
