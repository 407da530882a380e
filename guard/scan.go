package guard

import (
	"bytes"
	"slices"
)

// maxSweeps is the most anchor bytes scanned with one bytes.IndexByte sweep
// each; a set with more (the PII detectors anchor on digits) walks the bytes
// through a table instead.
const maxSweeps = 8

// scan finds the built-in detectors' matches in b, visiting the anchors
// from start. Matches that start before from were found by an earlier call
// and are not added again. When !final, b may continue: scan returns hold,
// the earliest start of a match the rest of the input could still complete
// (len(b) when none; matches at or after it are unsure), and resume, the
// first anchor whose result may change with more input (anchors before it
// are decided: a miss never depends on bytes not yet seen).
func (s *Set) scan(b []byte, start, from int, final bool, m *Matches) (hold, resume int) {
	st := scanState{hold: len(b), resume: len(b), from: from, final: final}
	switch {
	case s.blocks:
		s.blockScan(b, start, &st, m)
	case len(s.sweep) > 0:
		s.sweepScan(b, start, &st, m)
	default:
		s.walk(b, start, &st, m)
	}
	return max(st.hold, from), st.resume
}

type scanState struct {
	hold   int  // earliest start of an unfinished match
	resume int  // earliest anchor that needs more input
	last   int  // end of the previous match: the next must not start before it
	from   int  // matches starting before from are not added
	final  bool // the input ends with b
}

// visit runs the matchers at anchor i, which passed quick, and returns the
// index to go on from.
func (s *Set) visit(b []byte, i int, st *scanState, m *Matches) int {
	d, ms, e, r := s.at(b, i, st.final)
	switch r {
	case hit:
		if ms < st.last {
			return i + 1
		}
		st.last = e
		if ms >= st.from {
			m.add(ms, e, uint16(s.detRule[d]), i)
		}
		return max(i+1, e)
	case need:
		if ms >= st.from && ms < st.hold {
			st.hold = ms
		}
		st.resume = min(st.resume, i)
	}
	return i + 1
}

// sweepScan finds anchors with one bytes.IndexByte sweep per anchor byte
// (memchr speed), keeps those that pass quick, and visits them in order.
// Most anchors in code and JSON ('_' in snake_case, '-' in diffs) fail
// quick, so this costs one IndexByte call and a few compares per anchor.
func (s *Set) sweepScan(b []byte, i int, st *scanState, m *Matches) {
	cand := m.cand[:0]
	for _, c := range s.sweep {
		for j := i; j < len(b); j++ {
			k := bytes.IndexByte(b[j:], c)
			if k < 0 {
				break
			}
			j += k
			if quick(b, j) {
				cand = append(cand, j)
			}
		}
	}
	slices.Sort(cand)
	for _, at := range cand {
		if at >= i {
			i = s.visit(b, at, st, m)
		}
	}
	m.cand = cand
}

// walk visits every byte through the anchor table.
func (s *Set) walk(b []byte, i int, st *scanState, m *Matches) {
	for i < len(b) {
		if !s.anchor[b[i]] || !quick(b, i) {
			i++
			continue
		}
		i = s.visit(b, i, st, m)
	}
}

// at runs the detectors anchored on b[i] in priority order; b[i] passed
// quick, the look at its neighbours that rejects most anchors. The first
// hit wins unless an earlier detector still needs input.
func (s *Set) at(b []byte, i int, final bool) (detector, int, int, result) {
	needAt := -1
	for _, d := range s.byAnchor[b[i]] {
		st, e, r := matchers[d](b, i, final)
		switch r {
		case hit:
			if needAt >= 0 {
				return d, min(needAt, st), 0, need
			}
			return d, st, e, hit
		case need:
			if needAt < 0 || st < needAt {
				needAt = st
			}
		}
	}
	if needAt >= 0 {
		return 0, needAt, 0, need
	}
	return 0, 0, 0, miss
}

// neighbours loosens quick into what anchorMasks checks in bulk: per anchor
// byte, the ways its neighbours may let quick pass, each as the bytes
// allowed just before the anchor (prev) and just after it (next), "" for
// any. An anchor that quick passes, away from the ends of the input, passes
// one of its entries (TestNeighboursCoverQuick); an anchor without entries
// is not filtered.
var neighbours = [128][]struct{ prev, next string }{
	'_': {{prev: "bekmoBEKMO"}, {prev: "prstuPRSTU"}},
	'-': {{next: "-"}, {prev: "abikprst"}},
	'A': {{next: "BCIKSc"}},
	'B': {{prev: "/"}},
	'J': {{prev: "y"}},
}

// quick reports whether an anchor may start a match of some detector: the
// two bytes before a '_' or '-' are the end of a known prefix (gh[pousr]_,
// npm_, [sr]k_live_, github_pat_, secret_, private_; glpat-, xox[bpars]-,
// sk-, pypi-) or the '-' starts a run of dashes (-----BEGIN).
func quick(b []byte, i int) bool {
	switch b[i] {
	case '_':
		if i < 2 {
			return false
		}
		p, q := b[i-2]|0x20, b[i-1]|0x20
		switch q {
		case 'p', 'o', 'u', 's', 'r':
			return p == 'h'
		case 'm':
			return p == 'p'
		case 'k':
			return p == 's' || p == 'r'
		case 'b':
			return p == 'u'
		case 't':
			return p == 'e'
		case 'e':
			return p == 't'
		}
		return false
	case '-':
		if i+1 == len(b) || b[i+1] == '-' {
			return true
		}
		if i < 2 {
			return false
		}
		p, q := b[i-2], b[i-1]
		switch q {
		case 't':
			return p == 'a'
		case 'b', 'p', 'a', 'r', 's':
			return p == 'x'
		case 'k':
			return p == 's'
		case 'i':
			return p == 'p'
		}
		return false
	case '@':
		return i > 0 && is(b[i-1], cUserinfo)
	case 'B':
		return i > 0 && b[i-1] == '/'
	case 'A':
		// AKIA, ASIA, ABIA, ACCA and AIza start a word; AccountKey and
		// (Secret)AccessKey follow ';' or "secret". Base64 rarely passes.
		if i+1 == len(b) {
			return true
		}
		switch b[i+1] {
		case 'K', 'S', 'B', 'C', 'I':
			return wordStart(b, i)
		case 'c':
			return wordStart(b, i) || b[i-1]|0x20 == 't'
		}
		return false
	case 'J':
		return i >= 2 && b[i-1] == 'y' && b[i-2] == 'e' && jwtStart(b, i-2)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// Numbers start after a non-word byte (an IBAN's check digits
		// after its country letters); never inside a number or a word.
		if i == 0 {
			return true
		}
		if c := b[i-1]; !is(c, cWord) || c >= 'A' && c <= 'Z' {
			return true
		}
		_, esc := escBefore(b, i)
		return esc
	}
	return true
}
