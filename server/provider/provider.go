// Package provider turns the configured providers into a registry that
// resolves a client-facing model name to the provider and upstream model
// that serve it, and hands out each provider's credentials.
//
// A provider holds a list of credentials from day one; selection is
// round-robin now, and cooldowns and failover will extend Next without
// changing its callers.
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

	creds []Credential
	next  atomic.Uint64
}

// Credential is one key of a provider. The secret never reaches a log:
// String prints a fingerprint.
type Credential struct {
	Secret string
	Index  int
}

// String identifies the credential without revealing it.
func (c *Credential) String() string {
	if len(c.Secret) < 8 {
		return "key#" + itoa(c.Index)
	}
	return "key#" + itoa(c.Index) + "(..." + c.Secret[len(c.Secret)-4:] + ")"
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// New builds a Provider from its configuration.
func New(c *config.Provider) *Provider {
	p := &Provider{Name: c.Name, Kind: c.Kind, BaseURL: c.BaseURL, Models: c.Models, Config: c}
	p.Dialect = dialectOf(c)
	for i, k := range c.Keys {
		p.creds = append(p.creds, Credential{Secret: k, Index: i})
	}
	return p
}

func dialectOf(c *config.Provider) codec.Dialect {
	switch c.Kind {
	case config.KindAnthropic:
		return codec.DialectAnthropic
	case config.KindGemini:
		return codec.DialectGemini
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

// Next returns the credential to use for the next request, round-robin,
// or nil when the provider has none (mock).
func (p *Provider) Next() *Credential {
	if len(p.creds) == 0 {
		return nil
	}
	i := p.next.Add(1) - 1
	return &p.creds[i%uint64(len(p.creds))]
}
