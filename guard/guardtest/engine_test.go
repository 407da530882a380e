package guardtest

import (
	"crypto/rand"
	"testing"

	"slipstream/guard"
)

// engineScanner is package guard with every built-in detector on, action
// redact: the configuration the recall and false-positive figures are
// measured with.
type engineScanner struct {
	set *guard.Set
	m   *guard.Matches
}

var _ scanner = (*engineScanner)(nil)

func newEngineScanner(t *testing.T) *engineScanner {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	var rules []guard.Rule
	for _, n := range guard.Detectors() {
		rules = append(rules, guard.Rule{Name: n, Action: guard.Redact})
	}
	set, err := guard.Compile(guard.Config{Rules: rules, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return &engineScanner{set: set, m: guard.AcquireMatches()}
}

func (e *engineScanner) redact(body []byte) ([]byte, []string, error) {
	e.set.ScanBody(body, e.m)
	var rules []string
	for k := range e.m.Len() {
		rules = append(rules, e.m.Hit(k).Rule)
	}
	if e.m.Redacts() == 0 {
		return nil, rules, nil
	}
	return e.m.AppendRedacted(nil, body, nil, ""), rules, nil
}

// TestEngineDetectorNames: the engine's built-in detectors are the
// corpus's rules, in the same order.
func TestEngineDetectorNames(t *testing.T) {
	got := guard.Detectors()
	if len(got) != len(Rules) {
		t.Fatalf("engine %v\ncorpus %v", got, Rules)
	}
	for i := range got {
		if got[i] != Rules[i] {
			t.Fatalf("engine %v\ncorpus %v", got, Rules)
		}
	}
}

// TestPrecisionRecall measures package guard on the corpus: recall per
// detector over 18 secrets of each rule in each of the four dialects and
// the Responses WebSocket frame (every format variant, every encoder, every
// place in a request), and false positives per MB over 4 MiB of negative
// bodies per dialect. It fails below 100% recall for any detector, above
// 1 false positive per MB, or on a rewrite that is not valid JSON. Run
// with -v for the table (docs/GUARDRAILS.md, "Precision and recall").
func TestPrecisionRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the corpus takes a few seconds")
	}
	e := newEngineScanner(t)
	defer guard.ReleaseMatches(e.m)
	run := measure(t, e, 20, 2*maxVariants(), 11, 4)
	t.Logf("\n%s", run.table())
	run.check(t, 1)
}
