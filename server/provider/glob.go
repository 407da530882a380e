package provider

// MatchAny reports whether any of the glob patterns matches name.
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

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
