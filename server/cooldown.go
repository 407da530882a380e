package server

import (
	"slices"

	"slipstream/server/config"
	"slipstream/server/provider"
)

// forgetMoved ends the rests of every credential of a provider that next
// reaches differently from old (providerChanged): what made them fail
// may be what the reload fixed. Both generations' credential names are
// forgotten (IDs hash the provider's and the credential's names).
func forgetMoved(old, next *config.Config, cool provider.Cooldowns) {
	for i := range next.Providers {
		np := &next.Providers[i]
		op := old.Provider(np.Name)
		if op == nil || !providerChanged(op, np) {
			continue
		}
		for _, p := range [2]*config.Provider{op, np} {
			for j, k := range p.Keys {
				cool.Forget(provider.CredentialID(p.Name, k.Name, j))
			}
		}
	}
}

// providerChanged reports whether b reaches its provider differently from
// a: another base_url, proxy, or set of keys.
func providerChanged(a, b *config.Provider) bool {
	return a.BaseURL != b.BaseURL || a.Proxy != b.Proxy || !slices.Equal(a.Keys, b.Keys)
}
