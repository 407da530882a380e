package guardtest

import (
	"bytes"
	"testing"
)

// noopScanner finds nothing.
type noopScanner struct{}

func (noopScanner) redact([]byte) ([]byte, []string, error) { return nil, nil, nil }

// oracleScanner knows the secrets: it replaces every encoded form of
// every chunk of each (once and twice JSON-escaped, in each encoder's
// style), as a perfect engine would.
type oracleScanner struct{ secrets []Secret }

func (o oracleScanner) redact(body []byte) ([]byte, []string, error) {
	out := bytes.Clone(body)
	var matches []string
	for _, s := range o.secrets {
		found := false
		for _, c := range valueChunks(s.Value) {
			for m := numEscapeModes - 1; m >= 0; m-- { // \/ before /
				once := appendJSONString(nil, c, m)
				once = once[1 : len(once)-1]
				twice := appendJSONString(nil, string(once), m)
				twice = twice[1 : len(twice)-1]
				for _, form := range [][]byte{twice, once} {
					if bytes.Contains(out, form) {
						out = bytes.ReplaceAll(out, form, []byte("[REDACTED:"+s.Rule+":000000]"))
						found = true
					}
				}
			}
		}
		if found {
			matches = append(matches, s.Rule)
		}
	}
	return out, matches, nil
}

// breakingScanner rewrites an escape into something that is not JSON.
type breakingScanner struct{}

func (breakingScanner) redact(body []byte) ([]byte, []string, error) {
	return bytes.Replace(body, []byte(`\n`), []byte(`\[`), 1), nil, nil
}

// TestHarness: the harness sees every miss of an engine that finds
// nothing, every body an engine breaks, and full recall without false positives from one that finds
// exactly the secrets, whose rewrites stay valid JSON.
func TestHarness(t *testing.T) {
	const seed, per, group = 5, 3, 11
	none := measure(t, noopScanner{}, seed, per, group, 1)
	for _, r := range Rules {
		if st := none.stats[r]; st.caught != 0 || st.secrets == 0 {
			t.Fatalf("%s: the no-op scanner caught %d of %d", r, st.caught, st.secrets)
		}
	}
	if none.missed != len(Rules)*per*(len(Dialects)+1)*int(numEscapeModes) {
		t.Fatalf("%d misses, want %d", none.missed, len(Rules)*per*(len(Dialects)+1)*int(numEscapeModes))
	}
	broken := measure(t, breakingScanner{}, seed, 2, group, 0)
	if len(broken.broken) == 0 || broken.missed != len(Rules)*2*(len(Dialects)+1)*int(numEscapeModes) {
		t.Fatalf("a broken rewrite went unseen: %d broken, %d missed", len(broken.broken), broken.missed)
	}
	all := measure(t, oracleScanner{Secrets(seed, per)}, seed, per, group, 0)
	if all.missed != 0 || len(all.broken) != 0 {
		t.Fatalf("the oracle missed %d (%v), broke %v", all.missed, all.misses, all.broken)
	}
	for _, r := range Rules {
		if st := all.stats[r]; st.caught != st.secrets || st.fp != 0 {
			t.Fatalf("%s: oracle %+v", r, *st)
		}
	}
}
