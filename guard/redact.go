package guard

import "bytes"

// ScanBody scans a raw JSON request body: every string value, at any depth,
// with its escapes as on the wire. Matches lie inside one string value,
// never in a member name or a non-string token, never across an escape. m is
// reset first; its spans index body, which must stay unchanged while m is
// used. A body without a match is read once and not written (0 allocations).
func (s *Set) ScanBody(body []byte, m *Matches) {
	s.scanAll(body, m, true)
}

// ScanString scans raw JSON string content (the bytes between the quotes,
// still escaped), as ScanBody does a body.
func (s *Set) ScanString(content []byte, m *Matches) {
	s.scanAll(content, m, false)
}

func (s *Set) scanAll(b []byte, m *Matches, body bool) {
	m.Reset()
	m.set = s
	s.scan(b, 0, 0, true, m)
	s.scanPatterns(b, m)
	s.scanLiterals(b, m)
	if len(m.spans) > 0 {
		m.finish(b, body)
	}
}

// scanPatterns runs the operator's expressions whose keywords occur in b.
// Slow path: regexp allocates; it runs only on bodies that pass the
// prefilter.
func (s *Set) scanPatterns(b []byte, m *Matches) {
	for k := range s.patterns {
		p := &s.patterns[k]
		if !anyKeyword(b, p.keywords) {
			continue
		}
		for _, loc := range p.re.FindAllIndex(b, -1) {
			if loc[1] > loc[0] {
				m.add(loc[0], loc[1], p.rule, loc[0])
			}
		}
	}
}

func anyKeyword(b []byte, kws [][]byte) bool {
	if len(kws) == 0 {
		return true
	}
	for _, k := range kws {
		if bytes.Contains(b, k) {
			return true
		}
	}
	return false
}

// scanLiterals finds every occurrence of the operator's literal values.
func (s *Set) scanLiterals(b []byte, m *Matches) {
	for k := range s.literals {
		l := &s.literals[k]
		for _, v := range l.values {
			for i := 0; ; {
				j := bytes.Index(b[i:], v)
				if j < 0 {
					break
				}
				m.add(i+j, i+j+len(v), l.rule, i+j)
				i += j + len(v)
			}
		}
	}
}

// AppendRedacted appends b with every Redact match of m replaced by its
// placeholder; b must be what m was scanned from. When v is not nil, the
// value of each match whose rule restores is remembered in v under scope
// (unescaped), so a Restorer for that scope can put it back.
func (m *Matches) AppendRedacted(dst, b []byte, v *Vault, scope string) []byte {
	if m.redacts == 0 {
		return append(dst, b...)
	}
	h := m.set.hashers.Get().(*hasher)
	last := 0
	for _, sp := range m.spans {
		r := &m.set.rules[sp.rule]
		if r.action != Redact {
			continue
		}
		dst = append(dst, b[last:sp.s]...)
		n := len(dst)
		dst = h.appendPlaceholder(dst, r.name, b[sp.s:sp.e])
		if r.restore && v != nil {
			v.Put(scope, dst[n:], h.val)
		}
		last = sp.e
	}
	m.set.hashers.Put(h)
	return append(dst, b[last:]...)
}
