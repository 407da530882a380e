// Package provider turns the configured providers into a registry that
// resolves a client-facing model name to the provider and upstream model
// that serve it, and hands out each provider's credentials.
//
// A provider holds a pool of credentials, picked by its strategy (see
// credentials.go); a failing (credential, model) pair rests in a cooldown
// table shared by the registry's providers.
package provider

import (
	"sync/atomic"

	"slipstream/codec"
	"slipstream/server/config"
)

// Provider is one configured upstream.
type Provider struct {
	Name string
	Kind string
	// Dialect is the wire format the upstream speaks; DialectUnknown for
	// the mock, which answers in whatever dialect the client speaks.
	Dialect codec.Dialect
	BaseURL string
	Models  []string
	Config  *config.Provider

	creds    []Credential
	next     atomic.Uint64
	strategy string
	wheel    []uint16 // credential indices in weighted order (strategy weighted)
	cool     Cooldowns
	affinity bool
	gate     Gate      // accounts: usability beyond the cooldown table, or nil
	backend  Backend   // accounts: how requests are signed and answers read, or nil (KeyBackend)
	off      *Switches // credentials an operator turned off (switches.go), or nil
}

// New builds a Provider from its configuration.
func New(c *config.Provider) *Provider {
	p := &Provider{Name: c.Name, Kind: c.Kind, BaseURL: c.BaseURL, Models: c.Models, Config: c}
	p.Dialect = dialectOf(c)
	p.initCredentials(c)
	return p
}

func dialectOf(c *config.Provider) codec.Dialect {
	switch c.Kind {
	case config.KindAnthropic, config.KindClaudeAccount:
		return codec.DialectAnthropic
	case config.KindGemini, config.KindGeminiAccount:
		return codec.DialectGemini
	case config.KindCodexAccount:
		return codec.DialectResponses
	case config.KindOpenAI:
		if c.API == config.APIResponses {
			return codec.DialectResponses
		}
		return codec.DialectChat
	}
	return codec.DialectUnknown
}

// IsMock reports whether p is the built-in mock provider.
func (p *Provider) IsMock() bool { return p.Kind == config.KindMock }

// Serves reports whether one of p's model patterns matches model.
func (p *Provider) Serves(model string) bool { return MatchAny(p.Models, model) }

// speaks reports whether p answers client without translation.
func (p *Provider) speaks(client codec.Dialect) bool { return p.Dialect == client || p.IsMock() }

// Next returns the credential to use for the next request by the
// provider's strategy, ignoring cooldowns, or nil when the provider has
// none (mock). Requests use Pick.
func (p *Provider) Next() *Credential {
	if len(p.creds) == 0 {
		return nil
	}
	return &p.creds[p.start(0)]
}
