package server

import (
	"fmt"
	"io"

	"github.com/valyala/fasthttp"

	"slipstream/pool"
	"slipstream/server/accounts"
	"slipstream/server/config"
	"slipstream/server/metrics"
	"slipstream/server/provider"
)

// Subscription-account providers (claude-account, codex-account,
// gemini-account) sign each request with the access token of one login
// stored under accounts_dir. The account manager lives for the process
// (shared by generations); each generation matches its providers'
// `accounts:` patterns against the directory when it is built.

// accountsManager returns the process's account manager, built on first
// need from cfg.
func (sh *shared) accountsManager(cfg *config.Config) *accounts.Manager {
	sh.acctOnce.Do(func() {
		sh.accts = accounts.NewManager(accounts.NewDir(cfg.AccountsDir), accounts.Options{
			Flows:       Flows(cfg),
			Now:         sh.now,
			Log:         sh.log,
			Workers:     cfg.Accounts.RefreshWorkers,
			MaxCooldown: cfg.Accounts.MaxCooldown.D(),
			Lock:        sh.accountLock(cfg),
			OnRefresh:   func(name, outcome string) { sh.metrics.AccountRefresh(name, outcome) },
		})
		sh.metrics.Writer(sh.writeAccountGauges)
	})
	return sh.accts
}

// Flows returns the OAuth flow of each account type with cfg's
// overrides (accounts.oauth).
func Flows(cfg *config.Config) map[string]*accounts.Flow {
	fs := map[string]*accounts.Flow{}
	for _, t := range []string{accounts.TypeClaude, accounts.TypeCodex, accounts.TypeGemini, accounts.TypeAntigravity} {
		f := accounts.DefaultFlow(t)
		if o, ok := cfg.Accounts.OAuth[t]; ok {
			f.Override(accounts.Endpoints{Authorize: o.Authorize, Token: o.Token, DeviceCode: o.DeviceCode, DeviceToken: o.DeviceToken,
				DeviceVerify: o.DeviceVerify, Profile: o.Profile, Userinfo: o.Userinfo, CodeAssist: o.CodeAssist, Redirect: o.Redirect})
			if o.ClientID != "" {
				f.ClientID = o.ClientID
			}
			if o.ClientSecret != "" {
				f.ClientSecret = o.ClientSecret
			}
		}
		fs[t] = f
	}
	return fs
}

// setupAccounts gives each account provider of s its accounts: the
// files under accounts_dir whose names match its patterns and whose type
// fits its kind. It starts the background refresh for the generation.
func (s *Server) setupAccounts() {
	var m *accounts.Manager
	for _, p := range s.reg.Providers() {
		if !config.IsAccountKind(p.Kind) {
			continue
		}
		if m == nil {
			m = s.accountsManager(s.cfg)
		}
		all, err := m.Dir().Names()
		if err != nil {
			s.log.Printf("accounts: %v", err)
		}
		var names []string
		for _, n := range all {
			if provider.MatchAny(p.Config.Accounts, n) {
				names = append(names, n)
			}
		}
		for _, err := range m.Load(names) {
			s.log.Printf("accounts: provider %s: %v", p.Name, err)
		}
		names = fitting(m, p.Kind, names, s)
		p.SetAccounts(names, m.Gate(), accounts.NewBackend(m, config.AccountType(p.Kind), accounts.BackendOptions{
			ServerError: s.cfg.Failover.ServerError.D(),
			Log:         s.log,
			OnRequest:   s.metrics.AccountRequest,
			OnCooldown:  s.metrics.AccountCooldown,
		}))
		s.log.Printf("accounts: provider %s pools %s", p.Name, p.AccountNames())
	}
	if m != nil {
		go m.Run(s.stop)
	}
}

// fitting keeps the accounts whose type a provider kind can use.
func fitting(m *accounts.Manager, kind string, names []string, s *Server) []string {
	out := names[:0]
	want := config.AccountType(kind)
	for _, n := range names {
		a, ok := m.Account(n)
		if !ok {
			continue
		}
		if a.Type == want || want == accounts.TypeGemini && a.Type == accounts.TypeAntigravity {
			out = append(out, n)
			continue
		}
		s.log.Printf("accounts: %s is a %q account; a %s provider cannot use it", n, a.Type, kind)
	}
	return out
}

// errorBody reads an account's error answer (at most 1 MiB) and puts it
// back as the response body, so the client still gets it when no other
// candidate is left.
func (x *exchange) errorBody() []byte {
	r := x.upResp.BodyStream()
	if r == nil {
		return x.upResp.Body()
	}
	p := &x.try.peek
	p.reset()
	p.attempt, p.on = x.try.attempts, true
	var err error
	p.pre, err = pool.AppendCapped(p.pre, r, 1<<20-1) // 1 MiB read: over the cap when there is more
	if err != nil {
		p.r = r // the rest, if any, follows what was read
		return nil
	}
	x.upResp.SetBody(p.pre) // for readers of the whole body
	return p.pre
}

// accountField is the access-log value naming the attempt's account.
func (x *exchange) accountField() string {
	if x.try.cred == nil || !x.target.Provider.IsAccount() {
		return ""
	}
	return x.try.cred.Name
}

// accountLock is the cross-replica refresh lock: one Redis lock per
// account when redis.url is set, else none (one process).
func (sh *shared) accountLock(cfg *config.Config) accounts.Locker {
	if cfg.Redis.URL == "" {
		return nil
	}
	return accounts.NewRedisLock(cfg.Redis.URL, cfg.Redis.Prefix)
}

// writeAccountGauges writes each loaded account's rest (1 while
// cooling) and window utilisation at a scrape.
func (sh *shared) writeAccountGauges(w io.Writer) {
	m := sh.accts
	now := sh.now()
	names := m.Names()
	for _, n := range names { // each family's lines together
		cooling := 0
		if c := m.Cooling(n); c.After(now) {
			cooling = 1
		}
		fmt.Fprintf(w, "%s %d\n", metrics.Series("slipstream_account_cooling", "account", n), cooling)
	}
	for _, n := range names {
		u := m.Utilisation(n)
		for i, win := range [2]string{"short", "long"} {
			if u[i] >= 0 {
				fmt.Fprintf(w, "%s %g\n", metrics.Series("slipstream_account_window_utilisation", "account", n, "window", win), u[i])
			}
		}
	}
}

// upRequestBody is the upstream request's body as built (setUpBody or
// setUpSplice): a view of the one piece, or the aliased splice's pieces
// joined. It consumes nothing.
func (x *exchange) upRequestBody() ([]byte, bool) {
	if x.splice.x == nil {
		return nil, false
	}
	w := &x.splice.whole
	if len(w[1]) == 0 && len(w[2]) == 0 {
		return w[0], true
	}
	return x.splice.appendWhole(make([]byte, 0, x.splice.size)), true
}

// recordAccount counts the tokens of a request an account served, by
// account (slipstream_account_tokens_total).
func (x *exchange) recordAccount() {
	if name := x.accountField(); name != "" && x.usage.Known {
		x.s.metrics.AccountTokens(name, x.usage.Input, x.usage.Output)
	}
}

// writeNoAccount answers 503 when the target is an account provider none
// of whose accounts can be used at all (none matched, or each needs a
// login or is disabled): no wait would help, the operator must act.
func (x *exchange) writeNoAccount() bool {
	p := x.target.Provider
	if !p.IsAccount() {
		return false
	}
	x.result = resultUpstreamFailed
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusServiceUnavailable, "provider "+p.Name+" has no usable account: each needs a new login (slipstream login "+
		config.AccountType(p.Kind)+"), is disabled, or none matched its accounts patterns (slipstream accounts shows their state)")
	return true
}
