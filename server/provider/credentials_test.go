package provider

import (
	"strings"
	"testing"
	"time"

	"slipstream/server/config"
)

func pool(strategy string, affinity bool, keys ...config.ProviderKey) *Provider {
	return New(&config.Provider{Name: "p", Kind: "openai", Strategy: strategy, Affinity: affinity, Keys: keys})
}

func picks(p *Provider, n int, session uint64, now int64) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		c, _ := p.Pick(7, session, 0, now)
		if c == nil {
			b.WriteString("-")
			continue
		}
		b.WriteString(c.Name)
	}
	return b.String()
}

func TestPickStrategies(t *testing.T) {
	k := func(name string, w int) config.ProviderKey {
		return config.ProviderKey{Key: "s" + name, Name: name, Weight: w}
	}
	f := func(p *Provider, want string) {
		t.Helper()
		if got := picks(p, len(want), 0, 0); got != want {
			t.Fatalf("picks = %q, want %q", got, want)
		}
	}
	f(pool(config.StrategyRoundRobin, false, k("a", 1), k("b", 1), k("c", 1)), "abcabc")
	f(pool(config.StrategyFillFirst, false, k("a", 1), k("b", 1)), "aaaa")
	f(pool(config.StrategyWeighted, false, k("a", 5), k("b", 1), k("c", 1)), "aabacaaaabaca")

	// A resting credential is skipped until it recovers.
	p := pool(config.StrategyFillFirst, false, k("a", 1), k("b", 1))
	c, _ := p.Pick(7, 0, 0, 0)
	until := p.Cooldowns().Cool(c.ID, 7, 0, Backoff{Base: 2 * time.Second})
	if got := picks(p, 2, 0, int64(time.Second)); got != "bb" {
		t.Fatalf("resting a: %q", got)
	}
	if got := picks(p, 2, 0, until); got != "aa" {
		t.Fatalf("recovered a: %q", got)
	}
	// Another model is not affected.
	if c, _ := p.Pick(8, 0, 0, 1); c.Name != "a" {
		t.Fatal("cooldown leaked to another model")
	}
	// All resting: nil and the soonest recovery.
	b, _ := p.Pick(7, 0, 1, 0)
	p.Cooldowns().Cool(c.ID, 7, 0, Backoff{Base: 5 * time.Second})
	p.Cooldowns().Cool(b.ID, 7, 0, Backoff{Base: 3 * time.Second})
	if c, soonest := p.Pick(7, 0, 0, 0); c != nil || soonest != int64(3*time.Second) {
		t.Fatalf("all resting: %v %d", c, soonest)
	}

	// Affinity: one session, one credential; different sessions spread.
	a := pool(config.StrategyRoundRobin, true, k("a", 1), k("b", 1), k("c", 1))
	if got := picks(a, 10, HashString("s1"), 0); got != strings.Repeat(got[:1], 10) {
		t.Fatalf("affinity moved: %q", got)
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 30 * time.Minute, Exponential: true}
	f := func(streak int, want time.Duration) {
		t.Helper()
		if got := b.Rest(streak); got != want {
			t.Fatalf("Rest(%d) = %s, want %s", streak, got, want)
		}
	}
	f(1, time.Second)
	f(2, 2*time.Second)
	f(5, 16*time.Second)
	f(40, 30*time.Minute)
	l := NewLocal()
	if u := l.Cool(1, 2, 0, b); u != int64(time.Second) {
		t.Fatal(u)
	}
	if u := l.Cool(1, 2, 0, b); u != int64(2*time.Second) {
		t.Fatal("streak not counted", u)
	}
	l.Recover(1, 2)
	if u := l.Until(1, 2, 0); u != 0 {
		t.Fatal("not recovered")
	}
}

// TestLocalBounded: a flood of pairs never grows the table; each pair is
// found while it fits.
func TestLocalBounded(t *testing.T) {
	l := NewLocal()
	for i := uint64(1); i < 100000; i++ {
		l.Cool(i, 3, 0, Backoff{Base: time.Second})
	}
	if u := l.Until(99999, 3, 0); u != int64(time.Second) {
		t.Fatal("the latest pair was evicted")
	}
}
