package guardtest

import (
	"fmt"
	"sort"
	"testing"

	"slipstream/guard"
)

// escapeCuts returns the offsets of raw JSON string content at which a
// stream may cut it: between whole characters and whole escapes, as two
// SSE events each carrying a complete JSON string do.
func escapeCuts(raw []byte) []int {
	var cuts []int
	for i := 0; i < len(raw); {
		i += tokenLen(raw[i:])
		if i < len(raw) {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// tokenLen is the length of the escape or UTF-8 character b starts with.
func tokenLen(b []byte) int {
	switch {
	case b[0] == '\\' && len(b) > 1 && b[1] == 'u':
		return min(6, len(b))
	case b[0] == '\\':
		return min(2, len(b))
	case b[0] < 0x80:
		return 1
	}
	n := 1
	for n < len(b) && b[n]&0xc0 == 0x80 {
		n++
	}
	return n
}

// streamAnswer is a model's answer quoting a secret, as raw JSON string
// content in mode's escaping.
func streamAnswer(s Secret, m escapeMode) []byte {
	q := appendJSONString(nil, "Here is what I found in the file →\n"+s.Text()+"\nI’ll use it in the next step.", m)
	return q[1 : len(q)-1]
}

// streamLeaks reports whether out (raw string content) still lets s be
// read, or is not a valid JSON string.
func streamLeaks(out []byte, s Secret) (bool, error) {
	body := append(append([]byte(`["`), out...), `"]`...)
	leaked, err := Leaks(body, []Secret{s})
	return len(leaked) > 0, err
}

// TestStreamRecall: a model echoing each secret of the corpus (every rule
// and variant, every encoder) in its answer, cut into two stream deltas at
// every offset between whole characters and escapes, and fed in deltas of
// 1 to 16 bytes as token streams are, is redacted by guard's stream
// Scanner with every detector on: nothing of the value comes out, and the
// output stays a valid JSON string.
func TestStreamRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every cut of every secret takes a few seconds")
	}
	e := newEngineScanner(t)
	defer guard.ReleaseMatches(e.m)
	feed := func(deltas [][]byte) []byte {
		sc := e.set.AcquireScanner()
		defer guard.ReleaseScanner(sc)
		var out []byte
		for _, d := range deltas {
			out = sc.Feed(out, d)
		}
		return sc.Flush(out)
	}
	fails := map[string]int{}
	total := map[string]int{}
	groups := map[string]int{} // rule/variant, encoding, kind -> failures
	check := func(s Secret, m escapeMode, kind string, out []byte) bool {
		total[s.Rule]++
		leaked, err := streamLeaks(out, s)
		if !leaked && err == nil {
			return true
		}
		fails[s.Rule]++
		what := "leaked"
		if err != nil {
			what = "broke the JSON string"
		}
		groups[fmt.Sprintf("%s/%s, %s encoding: %s %s", s.Rule, s.Variant, escapeNames[m], what, kind)]++
		return false
	}
	r := newRand(7, 9)
	for i, s := range Secrets(21, maxVariants()) {
		m := escapeMode(i % int(numEscapeModes))
		raw := streamAnswer(s, m)
		if !check(s, m, "in one delta", feed([][]byte{raw})) {
			continue // a one-shot miss: the request-side table shows it
		}
		for _, cut := range escapeCuts(raw) {
			check(s, m, "cut in two deltas", feed([][]byte{raw[:cut], raw[cut:]}))
		}
		var deltas [][]byte
		for rest := raw; len(rest) > 0; {
			k := 0
			for n := 1 + r.IntN(16); k < len(rest) && k < n; {
				k += tokenLen(rest[k:])
			}
			deltas = append(deltas, rest[:k])
			rest = rest[k:]
		}
		check(s, m, "in token-sized deltas", feed(deltas))
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%d× %s", groups[k], k)
	}
	n, bad := 0, 0
	for _, rule := range Rules {
		n, bad = n+total[rule], bad+fails[rule]
	}
	t.Logf("%d streams of %d secrets (%d rules): %d leaked or broke", n, len(Rules)*maxVariants(), len(Rules), bad)
	for _, rule := range Rules {
		if total[rule] == 0 {
			t.Errorf("%s: not streamed", rule)
		}
		if fails[rule] > 0 {
			t.Errorf("%s: %d of %d streams leaked or broke", rule, fails[rule], total[rule])
		}
	}
}
