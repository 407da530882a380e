package provider

import (
	"strings"
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
			{Name: "chat", Kind: "openai", API: "chat", Models: []string{"gpt-*", "shared-*"}, Keys: []config.ProviderKey{{Key: "a"}, {Key: "b"}}},
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

func TestResolvePatterns(t *testing.T) {
	cfg := &config.Config{
		Providers: []config.Provider{
			{Name: "chat", Kind: "openai", API: "chat", Models: []string{"gpt-*", "claude-sonnet-5"}},
			{Name: "resp", Kind: "openai", API: "responses", Models: []string{"gpt-5*", "*"}},
			{Name: "claude", Kind: "anthropic", Models: []string{"claude-*", "claude-opus-*"}},
		},
		Aliases: map[string]string{
			"claude-*":         "chat/gpt-5",
			"claude-haiku-*":   "chat/gpt-5-mini",
			"*-opus-*":         "resp/o3",
			"claude-opus-4-6":  "resp/gpt-5-pro",
			"claude-*-4-5":     "resp/gpt-4.5",
			"gpt-5-codex":      "resp/gpt-5-codex",
			"claude-opus-4-8?": "resp/gpt-5-q",
		},
	}
	r := NewRegistry(cfg)
	f := func(model string, d codec.Dialect, wantProv, wantModel string, wantAliased bool) {
		t.Helper()
		tg, ok := r.Resolve(model, d)
		if !ok || tg.Provider.Name != wantProv || tg.Model != wantModel || tg.Aliased != wantAliased {
			t.Fatalf("Resolve(%q, %s) = %s/%s aliased=%v ok=%v; want %s/%s aliased=%v", model, d, name(tg), tg.Model, tg.Aliased, ok, wantProv, wantModel, wantAliased)
		}
	}
	a := codec.DialectAnthropic
	// An exact alias beats every pattern; an exact provider model beats
	// alias patterns.
	f("claude-opus-4-6", a, "resp", "gpt-5-pro", true)
	f("claude-sonnet-5", a, "chat", "claude-sonnet-5", false)
	f("gpt-5-codex", a, "resp", "gpt-5-codex", false)
	// Longest literal prefix first: claude-haiku-* before claude-*.
	f("claude-haiku-4-5-20251001", a, "chat", "gpt-5-mini", true)
	// Equal prefix: more literal bytes first (claude-*-4-5 before claude-*).
	f("claude-sonnet-4-5", a, "resp", "gpt-4.5", true)
	// The longer literal prefix wins whoever declares it.
	f("claude-opus-4-8x", a, "resp", "gpt-5-q", true)
	// A provider pattern with a longer prefix beats a shorter alias pattern.
	f("claude-opus-4-8", a, "claude", "claude-opus-4-8", false)
	// An alias pattern beats an equally specific provider pattern.
	f("claude-fable-5", a, "chat", "gpt-5", true)
	// *-opus-* has no literal prefix: claude-* wins for claude names.
	f("x-opus-1", a, "resp", "o3", true)
	// Provider patterns: gpt-5* is more specific than gpt-*.
	f("gpt-5.5", codec.DialectChat, "resp", "gpt-5.5", false)
	f("gpt-4o", codec.DialectResponses, "chat", "gpt-4o", false)
	f("llama", codec.DialectChat, "resp", "llama", false)
	// Equal prefix and literal bytes: fewer wildcards first.
	r2 := NewRegistry(&config.Config{
		Providers: []config.Provider{{Name: "p", Kind: "openai", Models: []string{"*"}}},
		Aliases:   map[string]string{"o?*": "p/two", "o*": "p/one"},
	})
	if tg, _ := r2.Resolve("o3", a); tg.Model != "one" {
		t.Fatalf("o3 -> %s, want one (o* has fewer wildcards than o?*)", tg.Model)
	}
	// The 1M-context suffix maps with its base name, which goes upstream.
	f("claude-opus-4-6[1m]", a, "resp", "gpt-5-pro", true)
	f("claude-sonnet-5[1M]", a, "chat", "claude-sonnet-5", true)
	f("claude-opus-4-8[1m]", a, "claude", "claude-opus-4-8", true)
	f("gpt-4o[2m]", codec.DialectResponses, "chat", "gpt-4o", true)

	if s := r.Configured(); !strings.Contains(s, "claude-opus-4-6") || !strings.Contains(s, "claude-haiku-*") || !strings.Contains(s, "claude-sonnet-5") {
		t.Fatalf("Configured() = %q", s)
	}
}

func name(t Target) string {
	if t.Provider == nil {
		return "<none>"
	}
	return t.Provider.Name
}

func TestCutLongContext(t *testing.T) {
	f := func(in, want string, wantCut bool) {
		t.Helper()
		got, cut := CutLongContext(in)
		if got != want || cut != wantCut {
			t.Fatalf("CutLongContext(%q) = %q, %v", in, got, cut)
		}
	}
	f("opus[1m]", "opus", true)
	f("claude-sonnet-4-6[1M]", "claude-sonnet-4-6", true)
	f("x[2m]", "x", true)
	f("[1m]", "[1m]", false)
	f("x[3m]", "x[3m]", false)
	f("x[1k]", "x[1k]", false)
	f("claude", "claude", false)
}

func TestResolveAllocs(t *testing.T) {
	cfg := &config.Config{
		Providers: []config.Provider{
			{Name: "chat", Kind: "openai", Models: []string{"gpt-*", "exact"}},
			{Name: "claude", Kind: "anthropic", Models: []string{"claude-*"}},
		},
		Aliases: map[string]string{"claude-*": "chat/gpt-5", "fast": "chat/gpt-5-mini"},
	}
	r := NewRegistry(cfg)
	for _, m := range []string{"fast", "exact", "claude-opus-4-8", "gpt-5", "claude-opus-4-6[1m]", "nothing"} {
		if n := testing.AllocsPerRun(100, func() { r.Resolve(m, codec.DialectAnthropic) }); n != 0 {
			t.Fatalf("Resolve(%q) allocates %v times", m, n)
		}
	}
}

func TestList(t *testing.T) {
	cfg := &config.Config{
		Providers: []config.Provider{
			{Name: "chat", Kind: "openai", Models: []string{"gpt-*", "exact-a"}},
			{Name: "up", Kind: "openai", Models: []string{"llama-*"}},
			{Name: "m", Kind: "mock", Models: []string{"mock*"}},
		},
		Aliases: map[string]string{"claude-*": "chat/gpt-5", "zfast": "chat/gpt-5-mini", "afast": "chat/x"},
	}
	r := NewRegistry(cfg)
	fetched := func(p *Provider) []string {
		if p.Name == "up" {
			return []string{"llama-3", "other", "llama-4"}
		}
		return nil
	}
	got := strings.Join(r.List(fetched, nil), " ")
	want := "afast zfast exact-a gpt-6.2-sol gpt-6.2-astra gpt-6.1-sol gpt-6.1-terra gpt-6-astra gpt-6-sol gpt-6-luna gpt-5.6-sol gpt-5.6-terra gpt-5.6-luna gpt-5.5 llama-3 llama-4 mock claude-opus-4-8 claude-sonnet-5 claude-haiku-4-5-20251001 claude-haiku-4-5 claude-fable-5"
	if got != want {
		t.Fatalf("List:\n got %s\nwant %s", got, want)
	}
	if strings.ContainsAny(got, "*?") {
		t.Fatalf("List holds a pattern: %s", got)
	}
	got = strings.Join(r.List(fetched, func(m string) bool { return Match("claude-*", m) }), " ")
	if got != "claude-opus-4-8 claude-sonnet-5 claude-haiku-4-5-20251001 claude-haiku-4-5 claude-fable-5" {
		t.Fatalf("List filtered by key: %s", got)
	}
}
