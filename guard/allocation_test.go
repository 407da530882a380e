//go:build !race

package guard

import "testing"

// TestAllocations: a scan of a body without matches, a streamed delta
// without a match (Scanner and Restorer), and a redaction into a dst with
// capacity allocate nothing. Budget: 0.
func TestAllocations(t *testing.T) {
	s := mustCompile(t, Config{})
	all := mustCompile(t, allRules())
	body := agentBody(1, 64<<10)
	m := AcquireMatches()
	defer ReleaseMatches(m)
	sc := s.AcquireScanner()
	defer ReleaseScanner(sc)
	r := AcquireRestorer(NewVault(VaultConfig{}), "k", 1)
	defer ReleaseRestorer(r)
	delta := []byte("Let me run the linter and the [unit] tests for the package we changed. ")
	secret := []byte(`{"a":"token ghp_` + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5" + ` end"}`)
	out := make([]byte, 0, 4096)
	f := func(name string, fn func()) {
		t.Helper()
		if n := testing.AllocsPerRun(50, fn); n != 0 {
			t.Fatalf("%s: %v allocs per run, want 0", name, n)
		}
	}
	f("ScanBody default", func() { s.ScanBody(body, m) })
	f("ScanBody all", func() { all.ScanBody(body, m) })
	f("Scanner.Feed", func() { out = sc.Feed(out[:0], delta) })
	f("Restorer.Feed", func() { out = r.Feed(out[:0], delta) })
	f("ScanBody+AppendRedacted with a match", func() {
		s.ScanBody(secret, m)
		out = m.AppendRedacted(out[:0], secret, nil, "")
	})
}
