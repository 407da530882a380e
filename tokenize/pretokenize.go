package tokenize

// The split functions below reproduce, without a regexp, the pre-tokenizer
// patterns that tiktoken applies with a backtracking engine (regexp2, .NET
// semantics: the first alternative that matches wins, quantifiers are greedy
// and give back one rune at a time). Each returns the end of the piece that
// starts at t[i]; i < len(t), and every rune starts some alternative, so
// pieces tile the text.
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+

// splitCl100k returns the end of the cl100k_base piece starting at t[i].
func splitCl100k(t []byte, i int) int {
	c, n := byteClass[t[i]], 1
	if c == cMulti {
		c, n = classAtMulti(t[i:])
	}
	if t[i] == '\'' {
		if k := contraction(t, i); k > 0 {
			return i + k
		}
	}
	if c&notPrefix == 0 {
		if j := i + n; j < len(t) {
			if c2, _ := classAt(t, j); c2&cLetter != 0 {
				return skipClass(t, j, cLetter)
			}
		}
	} else if c&cLetter != 0 {
		return skipClass(t, i, cLetter)
	}
	if c&cNumber != 0 {
		return skipNumbers(t, i)
	}
	if end := punctRun(t, i, c, false); end > i {
		return end
	}
	return spaceRun(t, i)
}

// splitO200k returns the end of the o200k_base piece starting at t[i]. A
// piece that starts with an ASCII rune (no ASCII rune is a mark, so a
// prefix rune can never also start the word) is dispatched on its class
// and its successor's; others take splitO200kSlow.
func splitO200k(t []byte, i int) int {
	c := byteClass[t[i]]
	switch {
	case c == cMulti:
		return splitO200kSlow(t, i)
	case c == cLower:
		// A word starting with \p{Ll} has no prefix and an empty upper run.
		return withContraction(t, skipClass(t, i+1, cLw))
	case c&notPrefix == 0:
		return prefixedO200k(t, i, c)
	case c == cUpper:
		if end, ok := upperThenLower(t, i); ok {
			return withContraction(t, end)
		}
		end, _ := upperRun(t, i)
		return withContraction(t, end)
	case c == cNumber:
		return skipNumbers(t, i)
	}
	return spaceRun(t, i) // \r or \n
}

// prefixedO200k is splitO200k for an ASCII rune of class c that can prefix
// a word: whitespace other than \r and \n, punctuation and symbols.
func prefixedO200k(t []byte, i int, c class) int {
	if j := i + 1; j < len(t) {
		c2, n2 := byteClass[t[j]], 1
		if c2 == cMulti {
			c2, n2 = classAtMulti(t[j:])
		}
		if c2 == cLower {
			return withContraction(t, skipClass(t, j+n2, cLw))
		}
		if c2&(cU|cLw) != 0 {
			// The first word alternative with the prefix; when it fails,
			// the rune at j is in cU and the second one matches.
			end, ok := upperThenLower(t, j)
			if !ok {
				end, _ = upperRun(t, j)
			}
			return withContraction(t, end)
		}
	}
	if end := punctRun(t, i, c, true); end > i {
		return end
	}
	return spaceRun(t, i)
}

// splitO200kSlow is splitO200k for a piece that starts with a non-ASCII
// rune: the alternatives in the pattern's order.
func splitO200kSlow(t []byte, i int) int {
	c, n := classAtMulti(t[i:])
	if c == cLower {
		return withContraction(t, skipClass(t, i+n, cLw))
	}
	prefixed := c&notPrefix == 0 && i+n < len(t)
	if prefixed {
		if end, ok := upperThenLower(t, i+n); ok {
			return withContraction(t, end)
		}
	}
	if c&(cU|cLw) != 0 {
		if end, ok := upperThenLower(t, i); ok {
			return withContraction(t, end)
		}
	}
	if prefixed {
		if end, ok := upperRun(t, i+n); ok {
			return withContraction(t, end)
		}
	}
	if c&cU != 0 {
		end, _ := upperRun(t, i)
		return withContraction(t, end)
	}
	if c&cNumber != 0 {
		return skipNumbers(t, i)
	}
	if end := punctRun(t, i, c, true); end > i {
		return end
	}
	return spaceRun(t, i)
}

// upperThenLower matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// at t[p]. The first run is greedy; when no lower-class rune follows it,
// the engine gives runes back until the last rune of the run that is in both
// classes (\p{Lm}, \p{Lo}, \p{M}) can serve as the second run.
func upperThenLower(t []byte, p int) (int, bool) {
	lastBoth := -1
	for q := p; q < len(t); {
		c, n := byteClass[t[q]], 1
		if c == cMulti {
			c, n = classAtMulti(t[q:])
		}
		if c&cU == 0 {
			if c&cLw != 0 {
				return skipClass(t, q, cLw), true
			}
			break
		}
		q += n
		if c&cLw != 0 {
			lastBoth = q
		}
	}
	return lastBoth, lastBoth >= 0
}

// upperRun matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]* at t[p].
func upperRun(t []byte, p int) (int, bool) {
	q := skipClass(t, p, cU)
	if q == p {
		return 0, false
	}
	return skipClass(t, q, cLw), true
}

// withContraction extends a word ending at end by an optional
// (?i:'s|'t|'re|'ve|'m|'ll|'d).
func withContraction(t []byte, end int) int {
	if end >= len(t) || t[end] != '\'' {
		return end
	}
	return end + contractionAt(t, end)
}

// contractionAt is contraction kept out of line, so that withContraction,
// called after every word, inlines.
//
//go:noinline
func contractionAt(t []byte, i int) int {
	return contraction(t, i)
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at t[i],
// where t[i] is an apostrophe, or 0. No non-ASCII rune lowercases to one of these
// letters (a test checks), so ASCII case folding is exact.
func contraction(t []byte, i int) int {
	if i+1 >= len(t) {
		return 0
	}
	switch t[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if i+2 < len(t) && t[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(t) && t[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// skipNumbers matches \p{N}{1,3} at t[i].
func skipNumbers(t []byte, i int) int {
	for k := 0; k < 3 && i < len(t); k++ {
		c, n := byteClass[t[i]], 1
		if c == cMulti {
			c, n = classAtMulti(t[i:])
		}
		if c&cNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// punctRun matches ` ?[^\s\p{L}\p{N}]+[\r\n]*` (with slash also `/` in the
// trailing class) at t[i], whose class is c; it returns i when it fails.
func punctRun(t []byte, i int, c class, slash bool) int {
	j := i
	if t[i] == ' ' {
		j++
		if j == len(t) {
			return i
		}
		c, _ = classAt(t, j)
	}
	if c&notPunct != 0 {
		return i
	}
	end := skipNotClass(t, j, notPunct)
	for end < len(t) && (t[end] == '\r' || t[end] == '\n' || slash && t[end] == '/') {
		end++
	}
	return end
}

// spaceRun matches \s*[\r\n]+|\s+(?!\S)|\s+ at t[i], a whitespace rune.
//
// Over the whitespace run t[i:j]: the first alternative ends just after the
// run's last \r or \n; the second takes the whole run at the end of the text,
// and otherwise gives back its last rune so that it can prefix the next word;
// the third takes a single whitespace rune.
func spaceRun(t []byte, i int) int {
	j, lastNewline, lastStart := i, -1, i
	for j < len(t) {
		c, n := byteClass[t[j]], 1
		if c == cMulti {
			c, n = classAtMulti(t[j:])
		}
		if c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 {
			lastNewline = j
		}
		lastStart = j
		j += n
	}
	switch {
	case lastNewline >= 0:
		return lastNewline + 1
	case j == len(t) || lastStart == i:
		return j
	}
	return lastStart
}
