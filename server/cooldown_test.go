package server

import (
	"fmt"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"slipstream/server/config"
	"slipstream/server/failover"
	"slipstream/server/provider"
)

// TestConnectFailureRestsBriefly: the only upstream refuses one
// connection and comes back; the request 2 s later (on slipstream's
// clock) is served, not refused for the rest of a 60 s cooldown.
func TestConnectFailureRestsBriefly(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	clock := &fakeClock{}
	base := startClockServer(t, fmt.Sprintf("providers:\n  - {name: p, kind: anthropic, base_url: \"http://%s\", keys: [k1, k2], models: [m1]}\ntimeouts: {keepalive: 0s}\n", addr), clock)
	path, body := clientRequest(0, false)
	if status, _, b := post(t, base+path, body); status < 500 {
		t.Fatalf("refused connection: %d %s", status, b)
	}
	if status, h, b := post(t, base+path, body); status != 429 || h.Get("Retry-After") != "1" {
		t.Fatalf("at once after the failure: %d retry-after %q %s", status, h.Get("Retry-After"), b)
	}

	// The provider comes back on the same address.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	up := &credUpstream{}
	u := httptest.NewUnstartedServer(up)
	u.Listener.Close()
	u.Listener = ln
	u.Start()
	t.Cleanup(u.Close)
	clock.advance(2 * time.Second)
	if status, _, b := post(t, base+path, body); status != 200 {
		t.Fatalf("2 s after one refused connection: %d %s", status, b)
	}
}

// TestConnectBackoff: consecutive connection failures rest a pair for
// failover.connect_error, doubling, at most failover.server_error; a
// success starts the streak over.
func TestConnectBackoff(t *testing.T) {
	t.Parallel()
	f := func(fo config.Failover, want ...time.Duration) {
		t.Helper()
		cfg := parseConfig(t, "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n", "")
		if fo.ConnectError != 0 {
			cfg.Failover.ConnectError = fo.ConnectError
		}
		if fo.ServerError != 0 {
			cfg.Failover.ServerError = fo.ServerError
		}
		b := failover.ConnectBackoff(&cfg.Failover)
		l := provider.NewLocal()
		for i, w := range want {
			if got := time.Duration(l.Cool(1, 2, 0, b)); got != w {
				t.Fatalf("failure %d rests %v, want %v", i+1, got, w)
			}
		}
		l.Recover(1, 2)
		if got := time.Duration(l.Cool(1, 2, 0, b)); got != want[0] {
			t.Fatalf("after a success the first failure rests %v, want %v", got, want[0])
		}
	}
	s := time.Second
	f(config.Failover{}, 1*s, 2*s, 4*s, 8*s, 16*s, 32*s, 60*s, 60*s)
	f(config.Failover{ServerError: config.Duration(5 * s)}, 1*s, 2*s, 4*s, 5*s, 5*s)
	f(config.Failover{ConnectError: config.Duration(250 * time.Millisecond), ServerError: config.Duration(s)}, 250*time.Millisecond, 500*time.Millisecond, s, s)
}

// TestReloadClearsCooldowns: a reload that changes a provider's base_url
// ends the rests of its credentials at once; a reload that leaves the
// provider as it was keeps them.
func TestReloadClearsCooldowns(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 500, nil }}
	good := &credUpstream{}
	ub, ug := newUpstream(t, bad), newUpstream(t, good)
	yml := "providers:\n  - {name: p, kind: anthropic, base_url: %q, keys: [k1], models: [m1]}\ntimeouts: {keepalive: 0s, idle: %s}\n"
	base, s := serveConfigServer(t, parseConfig(t, fmt.Sprintf(yml, ub.URL, "5m"), ""), nil)
	path, body := clientRequest(0, false)
	if status, _, b := post(t, base+path, body); status != 500 {
		t.Fatalf("failing provider: %d %s", status, b)
	}
	// The clock of this server stands still: the rest never ends by itself.
	reload := func(url, idle string) {
		t.Helper()
		if err := s.Reload(parseConfig(t, fmt.Sprintf(yml, url, idle), "")); err != nil {
			t.Fatal(err)
		}
	}
	reload(ub.URL, "4m") // the provider is unchanged
	if status, _, b := post(t, base+path, body); status != 429 {
		t.Fatalf("after a reload that left the provider as it was: %d %s", status, b)
	}
	reload(ug.URL, "4m")
	if status, _, b := post(t, base+path, body); status != 200 {
		t.Fatalf("after a reload that fixed base_url: %d %s", status, b)
	}
	if good.creds() != "k1" {
		t.Fatalf("the fixed provider saw %q", good.creds())
	}
}

// TestProviderChanged: a provider's credentials start afresh when its
// address, proxy or keys change.
func TestProviderChanged(t *testing.T) {
	t.Parallel()
	f := func(a, b config.Provider, want bool) {
		t.Helper()
		if got := providerChanged(&a, &b); got != want {
			t.Fatalf("providerChanged(%+v, %+v) = %v, want %v", a.BaseURL, b.BaseURL, got, want)
		}
	}
	p := config.Provider{Name: "p", BaseURL: "http://a", Keys: []config.ProviderKey{{Key: "k1", Name: "key#0"}}}
	same := p
	f(p, same, false)
	moved := p
	moved.BaseURL = "http://b"
	f(p, moved, true)
	proxied := p
	proxied.Proxy = "http://proxy:3128"
	f(p, proxied, true)
	rekeyed := p
	rekeyed.Keys = []config.ProviderKey{{Key: "k2", Name: "key#0"}}
	f(p, rekeyed, true)
	more := p
	more.Keys = append([]config.ProviderKey{}, p.Keys[0], config.ProviderKey{Key: "k3", Name: "key#1"})
	f(p, more, true)
	other := p
	other.Models = []string{"m2"}
	f(p, other, false)
}
