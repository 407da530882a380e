package server

import (
	"slices"

	"slipstream/server/config"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// connectFailed reports whether a call failed before a connection to the
// provider was made: that says the provider (or the way to it) is down,
// not that a credential is bad.
func connectFailed(c upstream.Cause) bool {
	switch c {
	case upstream.CauseDNS, upstream.CauseRefused, upstream.CauseTLS, upstream.CauseProxy, upstream.CauseConnectTimeout:
		return true
	}
	return false
}

// connectBackoff is the rest after a connection that could not be made:
// failover.connect_error, doubling with each consecutive failure of the
// pair, at most failover.server_error. A provider that restarts is used
// again a second later; one that stays down is tried ever less often.
func connectBackoff(f *config.Failover) provider.Backoff {
	return provider.Backoff{Base: f.ConnectError.D(), Max: f.ServerError.D(), Exponential: true}
}

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
