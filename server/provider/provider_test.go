package provider

import (
	"testing"

	"slipstream/codec"
	"slipstream/server/config"
)

func TestMatch(t *testing.T) {
	f := func(p, n string, want bool) {
		t.Helper()
		if Match(p, n) != want {
			t.Fatalf("Match(%q, %q) != %v", p, n, want)
		}
	}
	f("*", "", true)
	f("*", "anything/with/slash", true)
	f("claude-*", "claude-sonnet-4-5", true)
	f("claude-*", "gpt-5", false)
	f("gpt-?", "gpt-5", true)
	f("gpt-?", "gpt-55", false)
	f("o*", "o3-mini", true)
	f("*-mini", "gpt-5-mini", true)
	f("a*b*c", "aXXbYYc", true)
	f("a*b*c", "aXXbYY", false)
	f("mock", "mock", true)
	f("mock", "mock2", false)
}

func TestResolve(t *testing.T) {
	cfg := &config.Config{
		Providers: []config.Provider{
			{Name: "chat", Kind: "openai", API: "chat", Models: []string{"gpt-*", "shared-*"}, Keys: []string{"a", "b"}},
			{Name: "resp", Kind: "openai", API: "responses", Models: []string{"shared-*"}},
			{Name: "claude", Kind: "anthropic", Models: []string{"claude-*"}},
			{Name: "mock", Kind: "mock", Models: []string{"mock*"}},
		},
		Aliases: map[string]string{"fast": "chat/gpt-5-mini"},
	}
	r := NewRegistry(cfg)
	f := func(model string, d codec.Dialect, wantProv, wantModel string) {
		t.Helper()
		tg, ok := r.Resolve(model, d)
		if wantProv == "" {
			if ok {
				t.Fatalf("Resolve(%q) = %s, want none", model, tg.Provider.Name)
			}
			return
		}
		if !ok || tg.Provider.Name != wantProv || tg.Model != wantModel {
			t.Fatalf("Resolve(%q, %s) = %+v, %v", model, d, tg, ok)
		}
	}
	f("gpt-5", codec.DialectChat, "chat", "gpt-5")
	f("shared-x", codec.DialectResponses, "resp", "shared-x") // same dialect preferred
	f("shared-x", codec.DialectAnthropic, "chat", "shared-x") // else first in file order
	f("claude-3", codec.DialectChat, "claude", "claude-3")
	f("fast", codec.DialectAnthropic, "chat", "gpt-5-mini")
	f("mock-1", codec.DialectGemini, "mock", "mock-1")
	f("nothing", codec.DialectChat, "", "")

	p := r.Provider("chat")
	if a, b, c := p.Next(), p.Next(), p.Next(); a.Secret != "a" || b.Secret != "b" || c.Secret != "a" {
		t.Fatalf("round-robin: %s %s %s", a, b, c)
	}
	if s := p.Next().String(); s != "key#1" {
		t.Fatalf("credential string %q leaks or is wrong", s)
	}
}
