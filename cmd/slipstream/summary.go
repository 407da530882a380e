package main

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"slipstream/codec"
	"slipstream/server/config"
	"slipstream/server/provider"
)

// writeSummary prints what is about to be served, for the person who
// started it: version, listen address, client auth, each provider (never a
// credential, only how many), aliases, limits, and warnings.
func writeSummary(w io.Writer, c *config.Config, src string) {
	scheme := "http"
	if c.TLS.Enabled() {
		scheme = "https"
	}
	fmt.Fprintf(w, "slipstream %s, config: %s\n", version, src)
	fmt.Fprintf(w, "  listen       %s://%s\n", scheme, c.Listen)
	fmt.Fprintf(w, "  client auth  %s\n", authLine(c))
	fmt.Fprintf(w, "  providers    %d\n", len(c.Providers))
	for i := range c.Providers {
		fmt.Fprintf(w, "    %s\n", providerLine(&c.Providers[i]))
	}
	if len(c.Aliases) > 0 {
		names := make([]string, 0, len(c.Aliases))
		for n := range c.Aliases {
			names = append(names, n)
		}
		slices.Sort(names)
		for i, n := range names {
			names[i] = n + " -> " + c.Aliases[n]
		}
		fmt.Fprintf(w, "  aliases      %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "  limits       %s\n", limitsLine(c))
	fmt.Fprintf(w, "  timeouts     connect %s, first_byte %s, idle %s, keepalive %s, shutdown %s\n",
		c.Timeouts.Connect.D(), c.Timeouts.FirstByte.D(), c.Timeouts.Idle.D(), c.Timeouts.KeepaliveInterval(), c.Timeouts.Shutdown.D())
	for _, warn := range warnings(c) {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
}

func authLine(c *config.Config) string {
	if len(c.Keys) == 0 {
		return "off (no keys: any key is accepted; allowed on loopback only)"
	}
	names := make([]string, len(c.Keys))
	for i, k := range c.Keys {
		names[i] = k.Name
		if names[i] == "" {
			names[i] = fmt.Sprintf("keys[%d]", i)
		}
	}
	return fmt.Sprintf("on, %d keys: %s", len(c.Keys), strings.Join(names, ", "))
}

func providerLine(p *config.Provider) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s kind %s", p.Name, p.Kind)
	if p.API != "" {
		fmt.Fprintf(&b, ", api %s", p.API)
	}
	fmt.Fprintf(&b, ", models %s", strings.Join(p.Models, " "))
	switch {
	case p.Kind == config.KindMock:
	case config.IsAccountKind(p.Kind):
		fmt.Fprintf(&b, ", accounts %s, %s", strings.Join(p.Accounts, " "), p.BaseURL)
	case len(p.Keys) == 0:
		fmt.Fprintf(&b, ", no credentials (none sent), %s", p.BaseURL)
	default:
		fmt.Fprintf(&b, ", %d credentials, %s", len(p.Keys), p.BaseURL)
	}
	return b.String()
}

func limitsLine(c *config.Config) string {
	l := &c.Limits
	bif := "none (no memory limit set)"
	if l.MaxBytesInFlight > 0 {
		bif = l.MaxBytesInFlight.String()
		if m := config.MemoryLimit(); m > 0 && l.MaxBytesInFlight == config.DerivedBytesInFlight(m) {
			bif += fmt.Sprintf(" (a quarter of the %s memory limit)", config.Size(m))
		}
	}
	return fmt.Sprintf("max_body_bytes %s, max_concurrent %d, max_bytes_in_flight %s, gc_percent %d",
		l.MaxBodyBytes, l.MaxConcurrent, bif, l.GCPercent)
}

// warnings lists what is valid but probably not what was meant.
func warnings(c *config.Config) []string {
	var ws []string
	add := func(format string, args ...any) { ws = append(ws, fmt.Sprintf(format, args...)) }
	loopback := config.IsLoopback(c.Listen)
	if !loopback && !c.TLS.Enabled() && len(c.Keys) > 0 {
		add("listen %s is reachable from the network over plain HTTP: client keys travel in clear text (set tls: or terminate TLS in front)", c.Listen)
	}
	reg := provider.NewRegistry(c)
	var mocks, real []string
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Kind == config.KindMock {
			mocks = append(mocks, p.Name)
			if !loopback {
				add("provider %s is the mock, reachable from the network on %s: it answers with canned replies", p.Name, c.Listen)
			}
			continue
		}
		real = append(real, p.Name)
		if u, err := url.Parse(p.BaseURL); err == nil && u.Scheme == "http" && len(p.Keys) > 0 && !config.IsLoopback(hostPort(u)) {
			add("provider %s sends its credentials in clear text to %s", p.Name, p.BaseURL)
		}
	}
	if t, ok := resolveClaude(reg); !ok {
		add("no provider or alias serves claude-* (the model names Claude Code sends): Claude Code pointed here gets 404; add a provider with models [\"claude-*\"] or an alias such as claude-*: openai/gpt-5")
	} else if t.Provider.IsMock() && len(real) > 0 {
		add("claude-* model names (Claude Code) are answered by the mock provider %s", t.Provider.Name)
	}
	if len(real) > 0 {
		for _, m := range mocks {
			if p := c.Provider(m); slices.Contains(p.Models, "*") {
				add("mock provider %s serves every model name (\"*\"): requests meant for %s may get canned replies", m, strings.Join(real, ", "))
			}
		}
	}
	if c.Limits.MaxBytesInFlight == 0 && !loopback {
		add("no memory bound on a shared listener: limits.max_bytes_in_flight is unset and neither GOMEMLIMIT nor a cgroup memory limit is set, so a burst of large bodies can take any amount of memory")
	}
	return ws
}

// resolveClaude resolves the model names Claude Code sends by default
// (provider.KnownModels' claude-* entries), the first that routes.
func resolveClaude(reg *provider.Registry) (provider.Target, bool) {
	for _, m := range provider.KnownModels {
		if strings.HasPrefix(m, "claude-") {
			if t, ok := reg.Resolve(m, codec.DialectAnthropic); ok {
				return t, true
			}
		}
	}
	return provider.Target{}, false
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return u.Host + ":80"
}
