package guard

import "testing"

// TestNegativeBodies: generated agent bodies without secrets (code, diffs,
// logs with UUIDs, hashes and ids, lockfiles, base64 blobs) give no match
// with the default rules and at most 1 per MB with every detector on.
func TestNegativeBodies(t *testing.T) {
	def := mustCompile(t, Config{})
	all := mustCompile(t, allRules())
	m := AcquireMatches()
	defer ReleaseMatches(m)
	total, fps := 0, 0
	for seed := uint64(1); seed <= 4; seed++ {
		body := agentBody(seed, 1<<20)
		total += len(body)
		def.ScanBody(body, m)
		if m.Len() != 0 {
			h := m.Hit(0)
			t.Fatalf("seed %d: default rules matched %s %q", seed, h.Rule, body[h.Start:h.End])
		}
		all.ScanBody(body, m)
		for k := 0; k < m.Len(); k++ {
			h := m.Hit(k)
			t.Logf("seed %d: %s %q", seed, h.Rule, body[h.Start:h.End])
		}
		fps += m.Len()
	}
	if mb := float64(total) / (1 << 20); float64(fps) > mb {
		t.Fatalf("%d false positives in %.1f MB", fps, mb)
	}
}
