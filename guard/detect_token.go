package guard

// matchGitHub: gh[pousr]_ + 36 alphanumerics, or github_pat_ + 82 of
// [A-Za-z0-9_]; the anchor is the first '_'.
func matchGitHub(b []byte, i int, final bool) (int, int, result) {
	if i >= 3 && b[i-3] == 'g' && b[i-2] == 'h' && isByte(b[i-1], "pousr") {
		if !wordStart(b, i-3) {
			return 0, 0, miss
		}
		e, r := fixedRun(b, i+1, 36, cAlnum, cURL64, final)
		return i - 3, e, r
	}
	if !litBefore(b, i, "github") || !wordStart(b, i-6) {
		return 0, 0, miss
	}
	if r := litAt(b, i, "_pat_", final); r != hit {
		return i - 6, 0, r
	}
	e, r := fixedRun(b, i+5, 82, cWord, cURL64, final)
	return i - 6, e, r
}

// matchGitLab: glpat- + 20 to 64 of [0-9A-Za-z_-].
func matchGitLab(b []byte, i int, final bool) (int, int, result) {
	if !litBefore(b, i, "glpat") || !wordStart(b, i-5) {
		return 0, 0, miss
	}
	e, r := varRun(b, i+1, 20, 64, cURL64, cURL64, final)
	return i - 5, e, r
}

// matchSlackToken: xox[bpars]- then 24 to 255 of [A-Za-z0-9-] holding at
// least two more dashes and a run of 8 or more digits (the team and user
// ids): xoxb-<team>-<bot>-<secret>, xoxp-…, xoxa-2-….
func matchSlackToken(b []byte, i int, final bool) (int, int, result) {
	if i < 4 || !litBefore(b, i-1, "xox") || !isByte(b[i-1], "bpars") || !wordStart(b, i-4) {
		return 0, 0, miss
	}
	s := i - 4
	n, more := run(b, i+1, cAlnum|cDash, 255)
	if more && !final {
		return s, 0, need
	}
	e := i + 1 + n
	if n < 24 || n > 255 || (e < len(b) && b[e] == '_') {
		return 0, 0, miss
	}
	dashes, digits, longest := 0, 0, 0
	for _, c := range b[i+1 : e] {
		switch {
		case c == '-':
			dashes++
			digits = 0
		case c >= '0' && c <= '9':
			digits++
			longest = max(longest, digits)
		default:
			digits = 0
		}
	}
	if dashes < 2 || longest < 8 {
		return 0, 0, miss
	}
	return s, e, hit
}

// matchSlackWebhook: hooks.slack.com/services/T.../B.../<24 alnum> (each
// '/' possibly \/); the anchor is the 'B' (rarer than any byte of the
// host); the match is the host and path.
func matchSlackWebhook(b []byte, i int, final bool) (int, int, result) {
	if i < 2 || b[i-1] != '/' {
		return 0, 0, miss
	}
	k := i - 1
	if b[k-1] == '\\' {
		k--
	}
	t := k
	for t > 0 && k-t <= 13 && is(b[t-1], cUpper|cDigit) {
		t--
	}
	if n := k - t; n < 9 || n > 13 || b[t] != 'T' {
		return 0, 0, miss
	}
	s, ok := slashLitBefore(b, t, "hooks.slack.com/services/")
	if !ok || !wordStart(b, s) {
		return 0, 0, miss
	}
	n, more := run(b, i+1, cUpper|cDigit, 12)
	if more && !final {
		return s, 0, need
	}
	if n < 8 || n > 12 {
		return 0, 0, miss
	}
	j, r := slashLitAt(b, i+1+n, "/", final)
	if r != hit {
		return s, 0, r
	}
	e, r := fixedRun(b, j, 24, cAlnum, cURL64, final)
	return s, e, r
}

// matchStripe: sk_live_ or rk_live_ + 24 to 247 alphanumerics.
func matchStripe(b []byte, i int, final bool) (int, int, result) {
	if i < 2 || b[i-1] != 'k' || (b[i-2] != 's' && b[i-2] != 'r') || !wordStart(b, i-2) {
		return 0, 0, miss
	}
	if r := litAt(b, i, "_live_", final); r != hit {
		return i - 2, 0, r
	}
	e, r := varRun(b, i+6, 24, 247, cAlnum, cURL64, final)
	return i - 2, e, r
}

// matchOpenAI: sk-proj-, sk-svcacct- or sk-admin- + 40 to 250 of
// [A-Za-z0-9_-], or legacy sk- + 48 alphanumerics; every form must hold
// T3BlbkFJ (base64 of "OpenAI"), which keeps random sk- strings out.
func matchOpenAI(b []byte, i int, final bool) (int, int, result) {
	if !litBefore(b, i, "sk") || !wordStart(b, i-2) {
		return 0, 0, miss
	}
	s := i - 2
	for _, p := range [...]string{"-proj-", "-svcacct-", "-admin-"} {
		switch litAt(b, i, p, final) {
		case hit:
			e, r := varRun(b, i+len(p), 40, 250, cURL64, cURL64, final)
			if r == hit && !contains(b[i+len(p):e], "T3BlbkFJ") {
				return 0, 0, miss
			}
			return s, e, r
		case need:
			return s, 0, need
		}
	}
	e, r := fixedRun(b, i+1, 48, cAlnum, cURL64, final)
	if r == hit && !contains(b[i+1:e], "T3BlbkFJ") {
		return 0, 0, miss
	}
	return s, e, r
}

// matchAnthropic: sk-ant-api03- or sk-ant-admin01- + 93 of [A-Za-z0-9_-]
// and "AA".
func matchAnthropic(b []byte, i int, final bool) (int, int, result) {
	if !litBefore(b, i, "sk") || !wordStart(b, i-2) {
		return 0, 0, miss
	}
	s := i - 2
	for _, p := range [...]string{"-ant-api03-", "-ant-admin01-"} {
		switch litAt(b, i, p, final) {
		case hit:
			e, r := fixedRun(b, i+len(p), 95, cURL64, cURL64, final)
			if r == hit && (b[e-1] != 'A' || b[e-2] != 'A') {
				return 0, 0, miss
			}
			return s, e, r
		case need:
			return s, 0, need
		}
	}
	return 0, 0, miss
}

// matchNPM: npm_ + 36 alphanumerics.
func matchNPM(b []byte, i int, final bool) (int, int, result) {
	if !litBefore(b, i, "npm") || !wordStart(b, i-3) {
		return 0, 0, miss
	}
	e, r := fixedRun(b, i+1, 36, cAlnum, cURL64, final)
	return i - 3, e, r
}

// matchPyPI: pypi-AgEIcHlwaS5vcmc (a macaroon for pypi.org) + 50 to 1000
// of [A-Za-z0-9_-].
func matchPyPI(b []byte, i int, final bool) (int, int, result) {
	if !litBefore(b, i, "pypi") || !wordStart(b, i-4) {
		return 0, 0, miss
	}
	if r := litAt(b, i+1, "AgEIcHlwaS5vcmc", final); r != hit {
		return i - 4, 0, r
	}
	e, r := varRun(b, i+16, 50, 1000, cURL64, cURL64, final)
	return i - 4, e, r
}

func isByte(c byte, set string) bool {
	for k := 0; k < len(set); k++ {
		if set[k] == c {
			return true
		}
	}
	return false
}

func contains(b []byte, s string) bool {
	for k := 0; k+len(s) <= len(b); k++ {
		if string(b[k:k+len(s)]) == s {
			return true
		}
	}
	return false
}
