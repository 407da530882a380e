package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/server/admin"
	"slipstream/server/config"
	"slipstream/server/keys"
	"slipstream/server/provider"
	"slipstream/server/store"
)

// serveAdmin answers the management API and the console (server/admin)
// and reports whether the path was theirs. Their requests pass the same
// Host check as every request (DNS rebinding), but not its CORS: the
// console's own pages send their origin, every other origin is refused
// (admin.Handler). Other paths pay one prefix comparison.
func (s *Server) serveAdmin(ctx *fasthttp.RequestCtx) bool {
	if !admin.Owns(ctx.Path()) {
		return false
	}
	if !s.front.hostAllowed(ctx.Request.Header.Host()) {
		s.refuseFront(ctx, "Host "+quoteClip(ctx.Request.Header.Host())+" is not a loopback name or IP address; list it in allowed_hosts to serve it")
		return true
	}
	s.admin.Serve(ctx)
	return true
}

func quoteClip(b []byte) string { return fmt.Sprintf("%q", clipString(b)) }

// newAdmin builds the generation's management API over a bridge to it.
func (s *Server) newAdmin() *admin.Handler {
	tokens := make([]admin.Token, len(s.cfg.Admin.Tokens))
	for i, t := range s.cfg.Admin.Tokens {
		tokens[i] = admin.Token{Name: t.Name, Secret: t.Token}
	}
	return admin.New(admin.Config{Tokens: tokens, Backend: &bridge{s: s, digest: configDigest(s.cfg)}, Hub: s.hub, Log: s.log})
}

// revokeFeeds ends the open live feeds of the management API whose admin
// token next no longer accepts; the others stay open.
func (s *Server) revokeFeeds(next *Server) {
	if n := s.hub.Revoke(next.admin.Admits); n > 0 {
		s.log.Printf("config reload: closing %d management API feed(s) whose admin token is no longer configured", n)
	}
}

// configDigest is the hex SHA-256 of cfg as `check -print` shows it
// (secrets redacted), so two servers' digests match when their files do.
func configDigest(cfg *config.Config) string {
	b, err := cfg.MarshalRedacted()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// bridge implements admin.Backend over one generation and what the
// generations share.
type bridge struct {
	s      *Server
	digest string
}

var _ admin.Backend = (*bridge)(nil)

// Status implements admin.Backend.
func (b *bridge) Status() admin.Status {
	s, now := b.s, time.Now()
	l := &s.live
	st := admin.Status{
		Version:       s.version,
		StartedAt:     s.started.UTC(),
		UptimeSeconds: now.Sub(s.started).Seconds(),
		ConfigDigest:  b.digest,
		LastReload:    s.lastRel.Load(),
		Ledger:        s.ledgerView() != nil,
		Traffic: admin.Traffic{
			Requests:      l.finished.Load(),
			Errors:        l.failed.Load(),
			InFlight:      l.n.Load(),
			InputTokens:   l.input.Load(),
			OutputTokens:  l.output.Load(),
			SpentUSDToday: s.spentToday(),
		},
	}
	return st
}

// Providers implements admin.Backend. States are judged on the server's
// clock, the one cooldowns and budgets are kept on.
func (b *bridge) Providers() []admin.Provider {
	s, now := b.s, b.s.now()
	byProv, byCred := s.live.inFlight()
	ps := s.reg.Providers()
	out := make([]admin.Provider, 0, len(ps))
	for _, p := range ps {
		ap := admin.Provider{Name: p.Name, Kind: p.Kind, Models: p.Models, InFlight: byProv[p], Credentials: []admin.Credential{}}
		cs := p.Credentials()
		for i := range cs {
			c := &cs[i]
			ac := b.credential(p, c, now)
			ac.InFlight = byCred[c]
			ap.Credentials = append(ap.Credentials, ac)
		}
		out = append(out, ap)
	}
	return out
}

// credential is c's state: disabled by an operator (or its account
// disabled), cooling while any of its rests lasts, else ready.
func (b *bridge) credential(p *provider.Provider, c *provider.Credential, now time.Time) admin.Credential {
	s := b.s
	ac := admin.Credential{Name: c.Name, State: admin.StateReady}
	note, noted := s.live.credNoteOf(c.ID)
	if noted {
		at := note.at.UTC()
		ac.LastError, ac.LastErrorAt = note.cause, &at
	}
	until, accountWhy := time.Unix(0, provider.RestUntil(p.Cooldowns(), c.ID)), ""
	if p.IsAccount() && s.accts != nil {
		if a, ok := s.accts.Account(c.Name); ok {
			switch {
			case a.Disabled:
				ac.State, ac.Why = admin.StateDisabled, "account disabled"
			case a.NeedsLogin:
				ac.State, ac.Why = admin.StateDisabled, "needs a new login (slipstream login)"
			}
			accountWhy = a.CoolingReason
		}
		if u := s.accts.Cooling(c.Name); u.After(until) {
			until = u // the account rests as a whole, for its quota
			if accountWhy != "" {
				note.cause, noted = accountWhy, true
			}
		}
		util := s.accts.Utilisation(c.Name)
		for i, w := range [2]string{"short", "long"} {
			if util[i] >= 0 {
				ac.Quota = append(ac.Quota, admin.QuotaWindow{Window: w, Utilisation: util[i]})
			}
		}
	}
	switch {
	case p.Disabled(c):
		ac.State, ac.Why = admin.StateDisabled, "disabled by an operator"
	case ac.State == admin.StateDisabled:
	case until.After(now):
		u := until.UTC()
		ac.State, ac.CoolingUntil = admin.StateCooling, &u
		if noted {
			ac.Why = note.cause
		}
	}
	return ac
}

// Keys implements admin.Backend: each key's limits and its state in the
// store, read by the names keys.New gave them.
func (b *bridge) Keys() []admin.Key {
	s, now := b.s, b.s.now()
	out := make([]admin.Key, 0, len(s.cfg.Keys))
	for i := range s.cfg.Keys {
		k := &s.cfg.Keys[i]
		ak := admin.Key{Name: k.Name, Models: k.Models, RPM: k.RPM, TPM: k.TPM, Budget: k.Budget}
		if k.RPM > 0 {
			ak.RPMNow = s.store.Window("rpm:"+k.Name, time.Minute).Count(now)
		}
		if k.TPM > 0 {
			ak.TPMNow = s.store.Window("tpm:"+k.Name, time.Minute).Count(now)
		}
		if k.Budget > 0 {
			period := store.Daily
			if k.Period == config.PeriodMonthly {
				period = store.Monthly
			}
			bud := s.store.Budget("budget:"+k.Name, period)
			ak.Period, ak.BudgetUsed = k.Period, bud.Used(now)
			left := max(k.Budget-ak.BudgetUsed, 0)
			resets := bud.Resets(now).UTC()
			ak.BudgetLeft, ak.BudgetResetsAt = &left, &resets
		}
		ak.BudgetUSD, ak.SpentUSD = s.keyMoney(k.Name, now)
		if t := s.live.keyTotalsOf(k.Name); t != nil {
			ak.Requests, ak.InputTokens, ak.OutputTokens = t.requests.Load(), t.input.Load(), t.output.Load()
		}
		out = append(out, ak)
	}
	return out
}

// keyMoney is key name's budget in money per period and what it spent in
// the period (reservations of requests in flight included), both nil for
// a key without budget_usd: only those keep a money counter.
func (s *Server) keyMoney(name string, now time.Time) (budgetUSD, spentUSD *float64) {
	k := s.keys.ByName(name)
	if !k.HasBudgetUSD() {
		return nil, nil
	}
	sp := s.keys.Spend(k, now)
	budget, spent := keys.USD(sp.BudgetNanos), keys.USD(sp.UsedNanos+sp.ReservedNanos)
	return &budget, &spent
}

// Live implements admin.Backend.
func (b *bridge) Live() []admin.LiveRequest { return b.s.live.list(time.Now()) }

// Ledger implements admin.Backend.
func (b *bridge) Ledger() admin.Ledger { return b.s.ledgerView() }

// find returns the provider and credential named so.
func (b *bridge) find(prov, cred string) (*provider.Provider, *provider.Credential, error) {
	p := b.s.reg.Provider(prov)
	if p == nil {
		return nil, nil, fmt.Errorf("no provider %q: %w", admin.ClipName(prov), admin.ErrNotFound)
	}
	cs := p.Credentials()
	for i := range cs {
		if cs[i].Name == cred {
			return p, &cs[i], nil
		}
	}
	return nil, nil, fmt.Errorf("provider %q has no credential %q: %w", p.Name, admin.ClipName(cred), admin.ErrNotFound)
}

// EndCooldown implements admin.Backend: every rest of the credential
// ends, for every model (and across replicas with Redis).
func (b *bridge) EndCooldown(prov, cred string) error {
	p, c, err := b.find(prov, cred)
	if err != nil {
		return err
	}
	p.Cooldowns().Forget(c.ID)
	b.s.live.credMu.Lock()
	delete(b.s.live.creds, c.ID)
	b.s.live.credMu.Unlock()
	b.publishCredential(p, c)
	return nil
}

// SetDisabled implements admin.Backend. The switch is kept by the
// credential's ID (provider and credential names) across reloads, in
// this process.
func (b *bridge) SetDisabled(prov, cred string, disabled bool) error {
	p, c, err := b.find(prov, cred)
	if err != nil {
		return err
	}
	b.s.switches.Set(c.ID, disabled)
	b.publishCredential(p, c)
	return nil
}

func (b *bridge) publishCredential(p *provider.Provider, c *provider.Credential) {
	ac := b.credential(p, c, b.s.now())
	b.s.hub.Publish(admin.EventCredential, credentialEvent{Provider: p.Name, Credential: c.Name, State: ac.State, Why: ac.Why})
}

// Reload implements admin.Backend: the reload SIGHUP runs, from the file
// the server was started with.
func (b *bridge) Reload() error {
	src := b.s.reloadP.Load()
	if src == nil {
		return fmt.Errorf("this server was started without a configuration file to reload: %w", admin.ErrUnavailable)
	}
	return b.s.ReloadWith(src.path+" (management API)", src.load)
}

// Cancel implements admin.Backend.
func (b *bridge) Cancel(id string) error {
	if !b.s.live.cancel(id) {
		return fmt.Errorf("no live request %q: %w", admin.ClipName(id), admin.ErrNotFound)
	}
	return nil
}

// Loopback implements admin.Backend: true when the server listens, and
// only on loopback addresses.
func (b *bridge) Loopback() bool {
	sh := b.s.shared
	sh.lnMu.Lock()
	defer sh.lnMu.Unlock()
	for _, ln := range sh.lns {
		a, ok := ln.Addr().(*net.TCPAddr)
		if !ok || !a.IP.IsLoopback() {
			return false
		}
	}
	return len(sh.lns) > 0
}

// IsClientKey implements admin.Backend.
func (b *bridge) IsClientKey(presented []byte) bool { return b.s.keys.Find(presented) != nil }

// reloadSource is where a reload reads the configuration from.
type reloadSource struct {
	path string
	load func() (*config.Config, error)
}

// noteReloadSource remembers the file the server reloads from, for the
// management API's reload.
func (s *Server) noteReloadSource(path string, load func() (*config.Config, error)) {
	s.reloadP.Store(&reloadSource{path: path, load: load})
}

// noteReload records a reload's outcome for the management API and tells
// its live feed.
func (s *Server) noteReload(src string, load func() (*config.Config, error), err error) {
	s.reloadP.CompareAndSwap(nil, &reloadSource{path: src, load: load})
	r := &admin.Reload{At: time.Now().UTC(), Source: src, OK: err == nil}
	if err != nil {
		r.Error = err.Error()
	}
	s.lastRel.Store(r)
	s.hub.Publish(admin.EventReload, r)
}
