package metrics

import (
	"testing"

	"slipstream/server/config"
)

// TestModelLabels: a client's model name becomes a configured exact name,
// else the first configured pattern it matches, else "other": clients
// cannot grow the label set.
func TestModelLabels(t *testing.T) {
	cfg := &config.Config{
		Providers: []config.Provider{
			{Name: "a", Kind: "anthropic", Models: []string{"claude-opus-4-8", "claude-*"}},
			{Name: "o", Kind: "openai", Models: []string{"gpt-5*"}},
		},
		Aliases: map[string]string{"fast": "o/gpt-5-mini", "gemini-*": "o/gpt-5"},
	}
	l := NewModelLabels(cfg)
	f := func(model, want string) {
		t.Helper()
		if got := l.Label(model); got != want {
			t.Fatalf("Label(%q) = %q, want %q", model, got, want)
		}
	}
	f("claude-opus-4-8", "claude-opus-4-8")
	f("claude-sonnet-9", "claude-*")
	f("gpt-5.5-codex", "gpt-5*")
	f("fast", "fast")
	f("llama-3", Other)
	f("gemini-3-pro", "gemini-*") // a pattern alias
	f("claude-opus-4-8\n", "claude-*")
	f("", "")
	if n := testing.AllocsPerRun(100, func() { l.Label("gpt-5.5-codex") }); n != 0 {
		t.Fatalf("Label allocates %v times", n)
	}
}
