package guard

import (
	"bytes"
	"sync"
)

// Scanner redacts secrets in a stream of raw JSON string content deltas (a
// model's text or tool-call arguments on the way back), with the built-in
// detectors of its Set. The concatenated output of Feed calls and Flush
// equals the one-shot redaction of the concatenated input (ScanString then
// AppendRedacted), wherever the deltas are cut.
//
// Hold-back: Feed emits at once everything up to the earliest byte where a
// match could still start and be completed by later input. That is the
// start of an unfinished match a detector has seen (a PEM block until its
// footer, at most maxPEM = 16 KiB), or else the trailing run of bytes after
// the last break (space, quote, backslash, bracket...), because the
// single-word detectors never span a break; such a run is held for at most
// maxWord = 8 KiB (a JWT, the longest bounded word), or a tail that begins an
// operator literal. Operator patterns (RE2, unbounded) do not run on
// streams. Block rules redact on streams (the
// response has started; it cannot be refused any more). Not safe for
// concurrent use; one per stream.
type Scanner struct {
	set    *Set
	buf    []byte // emitted context (ctx bytes) + held bytes
	ctx    int    // buf[:ctx] is emitted context
	resume int    // anchors before buf[resume] are decided
	m      Matches
	found  []uint16 // rule of each match so far
}

var scannerPool = sync.Pool{New: func() any { return &Scanner{} }}

// AcquireScanner returns a Scanner for s from a pool.
func (s *Set) AcquireScanner() *Scanner {
	sc := scannerPool.Get().(*Scanner)
	sc.set = s
	return sc
}

// ReleaseScanner resets sc and returns it to the pool.
func ReleaseScanner(sc *Scanner) {
	sc.Reset()
	if cap(sc.buf) > 64<<10 {
		sc.buf = nil
	}
	scannerPool.Put(sc)
}

// Reset forgets the stream, keeping buffers.
func (sc *Scanner) Reset() {
	sc.set = nil
	sc.buf = sc.buf[:0]
	sc.ctx, sc.resume = 0, 0
	sc.m.Reset()
	sc.found = sc.found[:0]
}

// Found is the number of matches so far.
func (sc *Scanner) Found() int { return len(sc.found) }

// FoundRule returns the rule and action of match k (0 <= k < Found()), for
// metrics and the log; the value is not kept.
func (sc *Scanner) FoundRule(k int) (string, Action) {
	r := sc.set.rules[sc.found[k]]
	return r.name, r.action
}

// Feed appends to dst the redacted output that delta makes final. The
// bytes it holds back come out of a later Feed or Flush.
func (sc *Scanner) Feed(dst, delta []byte) []byte {
	sc.buf = append(sc.buf, delta...)
	return sc.emit(dst, false)
}

// Flush appends the rest; the stream ends.
func (sc *Scanner) Flush(dst []byte) []byte {
	dst = sc.emit(dst, true)
	sc.buf = sc.buf[:0]
	sc.ctx, sc.resume = 0, 0
	return dst
}

func (sc *Scanner) emit(dst []byte, final bool) []byte {
	b := sc.buf
	m := &sc.m
	m.Reset()
	m.set = sc.set
	hold, resume := sc.set.scan(b, sc.resume, sc.ctx, final, m)
	if !final {
		hold = min(hold, sc.set.tailHold(b, sc.ctx))
	}
	if len(sc.set.literals) > 0 {
		hold = sc.set.streamLiterals(b, sc.ctx, final, m, hold)
		sortSpans(m.spans)
	}
	// Matches reaching past hold are unsure: hold from the first of them.
	n, end := 0, 0
	for _, sp := range m.spans {
		if sp.s < end || splitsEscape(b, sp.s) || splitsEscape(b, sp.e) {
			continue // as ScanString drops them
		}
		if sp.e > hold {
			hold = min(hold, sp.s)
			resume = min(resume, sp.anchor)
			break
		}
		m.spans[n] = sp
		n++
		end = sp.e
	}
	m.spans = m.spans[:n]
	m.count()
	for _, sp := range m.spans {
		sc.found = append(sc.found, sp.rule)
	}
	dst = sc.appendOut(dst, b[:hold], m)
	keep := max(0, min(hold-lookBehind, resume))
	sc.buf = b[:copy(b, b[keep:])]
	sc.ctx = hold - keep
	sc.resume = resume - keep
	return dst
}

// streamLiterals adds the operator's literals found in b[from:] and, when
// !final, holds back a tail that is the start of one.
func (s *Set) streamLiterals(b []byte, from int, final bool, m *Matches, hold int) int {
	for k := range s.literals {
		l := &s.literals[k]
		for _, v := range l.values {
			for i := from; ; {
				j := bytes.Index(b[i:], v)
				if j < 0 {
					break
				}
				m.add(i+j, i+j+len(v), l.rule, i+j)
				i += j + len(v)
			}
			if final {
				continue
			}
			for n := min(len(v)-1, len(b)-from); n > 0; n-- {
				if bytes.HasSuffix(b, v[:n]) {
					hold = min(hold, len(b)-n)
					break
				}
			}
		}
	}
	return hold
}

// appendOut appends b[sc.ctx:] with every match that is not Log replaced by
// its placeholder.
func (sc *Scanner) appendOut(dst, b []byte, m *Matches) []byte {
	last := sc.ctx
	if len(m.spans) == 0 {
		return append(dst, b[last:]...)
	}
	h := sc.set.hashers.Get().(*hasher)
	for _, sp := range m.spans {
		r := &sc.set.rules[sp.rule]
		if r.action == Log {
			continue
		}
		dst = append(dst, b[last:sp.s]...)
		dst = h.appendPlaceholder(dst, r.name, b[sp.s:sp.e])
		last = sp.e
	}
	sc.set.hashers.Put(h)
	return append(dst, b[last:]...)
}

// tailHold returns where the trailing run of b must be held from: the first
// word start in it where a single-word match could begin (the rest of the
// run is consistent with one of the enabled detectors' prefixes), or len(b)
// when none could, so that a partial ordinary word is not delayed.
func (s *Set) tailHold(b []byte, from int) int {
	t := tailStart(b, from)
	if s.holdRuns || t == len(b)-maxWord {
		return t
	}
	for p := t; p < len(b); p++ {
		if wordStart(b, p) && s.couldBegin(b[p:]) {
			return p
		}
	}
	return len(b)
}

// couldBegin reports whether w is consistent with a match prefix: w is a
// prefix of one, or starts with one.
func (s *Set) couldBegin(w []byte) bool {
	for _, lit := range s.prefixes {
		if prefixConsistent(w, lit) {
			return true
		}
	}
	return false
}

// prefixConsistent compares w with lit up to the shorter of the two, a '/'
// of lit possibly written \/ in w.
func prefixConsistent(w []byte, lit string) bool {
	i := 0
	for k := 0; k < len(lit); k++ {
		if i == len(w) {
			return true
		}
		if lit[k] == '/' && w[i] == '\\' {
			i++
			if i == len(w) {
				return true
			}
		}
		if w[i] != lit[k] {
			return false
		}
		i++
	}
	return true
}

// tailStart returns where the trailing unbroken run of b starts (not before
// from, and at most maxWord bytes back). An escaped slash \/ (or a final
// backslash that may start one) does not break a run: slash-escaping
// encoders write URLs and base64 that way.
func tailStart(b []byte, from int) int {
	lo := max(from, len(b)-maxWord)
	for j := len(b) - 1; j >= lo; j-- {
		if is(b[j], cBreak) && !(b[j] == '\\' && (j+1 == len(b) || b[j+1] == '/')) {
			return j + 1
		}
	}
	return lo
}
