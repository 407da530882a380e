package guard

// anchorLead bounds how far a match may start after its anchor (a keyword
// and its '=' before a value): a streaming rescan starts this far before the
// first unemitted byte so that a keyword already emitted still finds its
// value.
const anchorLead = 64

// scan finds the built-in detectors' matches in b, visiting anchors from
// max(0, from-anchorLead). Matches that start before from were found by an
// earlier call and are not added again. When !final, b may continue: scan
// returns the earliest start of a match the rest of the input could still
// complete (len(b) when none), and matches at or after it are unsure.
func (s *Set) scan(b []byte, from int, final bool, m *Matches) (hold int) {
	hold = len(b)
	last := 0 // end of the previous match: the next must start at or after it
	for i := max(0, from-anchorLead); i < len(b); i++ {
		if !s.anchor[b[i]] {
			continue
		}
		d, st, e, r := s.at(b, i, final)
		switch r {
		case hit:
			if st < last {
				continue
			}
			last = e
			if st >= from {
				m.add(st, e, uint16(s.detRule[d]))
			}
			i = max(i, e-1)
		case need:
			if st >= from && st < hold {
				hold = st
			}
		}
	}
	return max(hold, from)
}

// at runs the detectors anchored on b[i] in priority order. The first hit
// wins unless an earlier detector still needs input.
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
