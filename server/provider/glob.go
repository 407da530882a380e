package provider

import "strings"

// MatchAny reports whether any of the glob patterns matches name.
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

// IsPattern reports whether s holds a wildcard ('*' or '?').
func IsPattern(s string) bool { return strings.ContainsAny(s, "*?") }

// Match reports whether name matches pattern, where '*' matches any run of
// bytes (slashes included: model names such as "org/model" are common)
// and '?' matches one byte. There are no character classes.
func Match(pattern, name string) bool {
	px, nx := 0, 0
	starP, starN := -1, 0
	for nx < len(name) {
		switch {
		case px < len(pattern) && (pattern[px] == '?' || pattern[px] == name[nx]):
			px++
			nx++
		case px < len(pattern) && pattern[px] == '*':
			starP, starN = px, nx
			px++
		case starP >= 0:
			starN++
			px, nx = starP+1, starN
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

// glob is a pattern measured once at configuration load, so that its
// specificity orders it against other patterns. (A literal-prefix check
// before Match showed no win in BenchmarkResolve: Match already stops at
// the first differing byte.)
type glob struct {
	raw    string
	prefix string // the bytes before the first wildcard
	// literal is the number of non-wildcard bytes, wild the number of
	// wildcards.
	literal, wild int
}

func compileGlob(p string) glob {
	g := glob{raw: p, prefix: p}
	if i := strings.IndexAny(p, "*?"); i >= 0 {
		g.prefix = p[:i]
	}
	g.wild = strings.Count(p, "*") + strings.Count(p, "?")
	g.literal = len(p) - g.wild
	return g
}

func (g *glob) match(name string) bool {
	return Match(g.raw, name)
}

// moreSpecific orders patterns most specific first: the longer literal
// prefix first ("claude-sonnet-*" before "claude-*" before "*sonnet*"),
// then the one with more literal bytes ("claude-*-5" before "claude-*"),
// then the one with fewer wildcards. It returns 0 for equally specific
// patterns, which keep their configuration order.
func moreSpecific(a, b *glob) int {
	if d := len(b.prefix) - len(a.prefix); d != 0 {
		return d
	}
	if d := b.literal - a.literal; d != 0 {
		return d
	}
	return a.wild - b.wild
}
