//go:build !race

package keys

import (
	"testing"
	"time"

	"slipstream/server/config"
)

// TestKeyCheckAllocs: finding a key (clear or digest) and admitting a
// request under rpm, tpm, budget and budget_usd, reserving its tokens and money and settling
// them allocate nothing.
func TestKeyCheckAllocs(t *testing.T) {
	s := set(t,
		config.Key{Name: "a", Key: "sk-a", Models: []string{"claude-*"}, RPM: 1 << 40, TPM: 1 << 40, Budget: 1 << 50, BudgetUSD: 1e14},
		config.Key{Name: "b", KeySHA256: digest("sk-b")},
	)
	presented := []byte("sk-a")
	now := time.Now()
	n := testing.AllocsPerRun(1000, func() {
		k := s.Find(presented)
		if !k.Allows("claude-sonnet-5") {
			t.Fatal("model")
		}
		if r, _ := s.Admit(k, now); r != Allowed {
			t.Fatal(r)
		}
		res, r, _ := s.Reserve(k, now, 100, 5000)
		if r != Allowed {
			t.Fatal(r)
		}
		s.Settle(k, res, 10, 700, now)
		s.Charge(k, 10, 70, now)
	})
	if n != 0 {
		t.Fatalf("%v allocs per key check, want 0", n)
	}
}
