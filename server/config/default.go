package config

// Default returns the built-in configuration used when no file is given:
// listen on 127.0.0.1:8317 without client keys, one provider for each of
// ANTHROPIC_API_KEY, OPENAI_API_KEY and GEMINI_API_KEY found through
// lookup, and the mock provider. With no provider keys the mock serves
// every model name, so any client works out of the box; otherwise it
// serves mock* only.
func Default(lookup func(string) (string, bool)) *Config {
	c := &Config{Listen: DefaultListen}
	add := func(env string, p Provider) {
		if v, ok := lookup(env); ok && v != "" {
			p.Keys = []ProviderKey{{Key: v}}
			c.Providers = append(c.Providers, p)
		}
	}
	add("ANTHROPIC_API_KEY", Provider{Name: "anthropic", Kind: KindAnthropic, Models: []string{"claude-*"}})
	add("OPENAI_API_KEY", Provider{Name: "openai", Kind: KindOpenAI, API: APIResponses, Models: []string{"gpt-*", "o1*", "o3*", "o4*", "codex-*"}})
	add("GEMINI_API_KEY", Provider{Name: "gemini", Kind: KindGemini, Models: []string{"gemini-*"}})
	mockModels := []string{"mock*"}
	if len(c.Providers) == 0 {
		mockModels = []string{"*"}
	}
	c.Providers = append(c.Providers, Provider{Name: "mock", Kind: KindMock, Models: mockModels})
	c.applyDefaults()
	return c
}
