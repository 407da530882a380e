package provider

import (
	"testing"
	"time"

	"slipstream/server/config"
)

// TestSwitchesSkipDisabled: Pick skips a credential turned off, and uses
// it again once turned back on; RestUntil shows a credential's latest
// rest over every model.
func TestSwitchesSkipDisabled(t *testing.T) {
	c := &config.Provider{Name: "p", Kind: "openai", Keys: []config.ProviderKey{{Name: "a", Key: "ka"}, {Name: "b", Key: "kb"}}, Strategy: config.StrategyFillFirst}
	p := New(c)
	sw := NewSwitches()
	p.off = sw
	now := time.Now().UnixNano()
	if got, _ := p.Pick(1, 0, 0, now); got.Name != "a" {
		t.Fatalf("pick %v", got)
	}
	if !sw.Set(p.creds[0].ID, true) || sw.Set(p.creds[0].ID, true) {
		t.Fatal("Set reports no change")
	}
	if got, _ := p.Pick(1, 0, 0, now); got.Name != "b" || !p.Disabled(&p.creds[0]) {
		t.Fatalf("pick with a off: %v", got)
	}
	sw.Set(p.creds[1].ID, true)
	if got, soonest := p.Pick(1, 0, 0, now); got != nil || soonest != 0 {
		t.Fatalf("pick with all off: %v %d", got, soonest)
	}
	sw.Set(p.creds[0].ID, false)
	if got, _ := p.Pick(1, 0, 0, now); got.Name != "a" {
		t.Fatalf("pick with a on again: %v", got)
	}
	l := NewLocal()
	l.Cool(p.creds[0].ID, 1, now, Backoff{Base: time.Second})
	u := l.Cool(p.creds[0].ID, 2, now, Backoff{Base: time.Minute})
	if got := RestUntil(l, p.creds[0].ID); got != u {
		t.Fatalf("RestUntil %d, want %d", got, u)
	}
	if got := RestUntil(l, p.creds[1].ID); got != 0 {
		t.Fatalf("RestUntil of a rested-never credential %d", got)
	}
}
