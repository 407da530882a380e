package tokenize

import (
	"testing"
	"unicode"
)

func TestForModel(t *testing.T) {
	f := func(model string, want *Encoding) {
		t.Helper()
		if got := ForModel(model); got != want {
			t.Fatalf("ForModel(%q) = %s, want %s", model, got.Name(), want.Name())
		}
	}
	o, c := O200k(), Cl100k()
	f("gpt-4o", o)
	f("gpt-4o-mini-2024-07-18", o)
	f("gpt-4.1-nano", o)
	f("gpt-4.5-preview", o)
	f("gpt-5", o)
	f("gpt-5-codex", o)
	f("GPT-5.1", o)
	f("o1-preview", o)
	f("o3-mini", o)
	f("o4-mini-high", o)
	f("codex-mini-latest", o)
	f("openai/gpt-4o", o)
	f("gpt-4", c)
	f("gpt-4-0613", c)
	f("gpt-4-turbo", c)
	f("gpt-4-32k", c)
	f("gpt-3.5-turbo-0125", c)
	f("gpt-35-turbo", c)
	f("text-embedding-3-small", c)
	f("text-embedding-ada-002", c)
	f("claude-sonnet-4-5", o)
	f("claude-3-haiku-20240307", o)
	f("gemini-2.5-pro", o)
	f("llama-3", o)
	f("", o)
}

// TestContractionFold backs contraction's ASCII-only case folding: regexp2
// folds with unicode.ToLower, and no other rune lowers to a contraction
// letter.
func TestContractionFold(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		switch unicode.ToLower(r) {
		case 's', 't', 'r', 'e', 'v', 'm', 'l', 'd':
			t.Fatalf("U+%04X lowercases to an ASCII contraction letter", r)
		}
	}
}
