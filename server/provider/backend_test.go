package provider

import (
	"testing"

	"github.com/valyala/fasthttp"

	"slipstream/server/config"
)

// keyCall is an attempt as KeyBackend reads it: its provider and header.
type keyCall struct {
	Call
	p *Provider
	h fasthttp.RequestHeader
}

func (c *keyCall) Provider() *Provider             { return c.p }
func (c *keyCall) Header() *fasthttp.RequestHeader { return &c.h }

// TestKeyBackendSign: the key goes in the header each API reads.
func TestKeyBackendSign(t *testing.T) {
	f := func(kind, header, want string) {
		t.Helper()
		p := New(&config.Provider{Name: "p", Kind: kind, Keys: []config.ProviderKey{{Key: "sk-1"}}})
		c := &keyCall{p: p}
		p.Backend().Sign(c, &p.Credentials()[0])
		if got := string(c.h.Peek(header)); got != want {
			t.Fatalf("%s: %s = %q, want %q", kind, header, got, want)
		}
	}
	f(config.KindAnthropic, "X-Api-Key", "sk-1")
	f(config.KindAnthropic, "Anthropic-Version", "2023-06-01")
	f(config.KindGemini, "X-Goog-Api-Key", "sk-1")
	f(config.KindOpenAI, "Authorization", "Bearer sk-1")
	p := New(&config.Provider{Name: "local", Kind: config.KindOpenAI})
	c := &keyCall{p: p}
	p.Backend().Sign(c, nil)
	if c.h.Len() != 0 {
		t.Fatal("a keyless provider got a credential header")
	}
}
