package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/codec"
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
		p.SetAccounts(names, m.Gate())
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

// accountRefusal returns a 4xx for a request the target's account type
// cannot serve as sent, with the reason; 0 when it can (or the target is
// no account provider). slipstream does not disguise one client as
// another: it refuses instead.
func (x *exchange) accountRefusal() (int, string) {
	p := x.target.Provider
	switch p.Kind {
	case config.KindClaudeAccount:
		ua := x.clientHeader().UserAgent()
		if x.rt.dialect != codec.DialectAnthropic || !bytes.HasPrefix(ua, []byte("claude-cli/")) {
			return fasthttp.StatusForbidden, "provider " + p.Name + " serves a Claude subscription account, which takes Claude Code's own requests only " +
				"(Anthropic Messages from claude-cli); this request comes from another client. Use a provider of kind anthropic with an API key for it."
		}
	case config.KindCodexAccount:
		if x.rt.dialect == codec.DialectResponses && gjson.GetBytes(x.body, "store").Raw == "true" {
			return fasthttp.StatusBadRequest, "provider " + p.Name + " serves a ChatGPT (Codex) account: its backend stores nothing; send \"store\": false (as Codex does)."
		}
		if x.rt.dialect == codec.DialectResponses && gjson.GetBytes(x.body, "previous_response_id").Exists() {
			return fasthttp.StatusBadRequest, "provider " + p.Name + " serves a ChatGPT (Codex) account: its backend keeps no responses, so previous_response_id cannot be used; send the whole conversation (or use the WebSocket transport, which slipstream chains itself)."
		}
	case config.KindGeminiAccount:
		if x.counting {
			return fasthttp.StatusNotImplemented, "provider " + p.Name + " (gemini-account) counts tokens locally only; remove count_tokens: upstream"
		}
	}
	return 0, ""
}

// setAccountCredential signs the upstream request with the account's
// current access token (refreshed first when it has expired) and the
// headers its type requires.
func (x *exchange) setAccountCredential(cred *provider.Credential) {
	if cred == nil {
		return
	}
	m := x.s.accts
	tok, err := m.Token(context.Background(), cred.Name)
	if err != nil {
		x.s.log.Printf("accounts: %s: %v", cred.Name, err)
		return // sent unsigned: the upstream's 401 fails over
	}
	x.try.acct = tok
	h := &x.upReq.Header
	h.Set("Authorization", tok.Bearer)
	switch x.target.Provider.Kind {
	case config.KindClaudeAccount:
		if len(h.Peek("Anthropic-Version")) == 0 {
			h.Set("Anthropic-Version", "2023-06-01")
		}
		addBeta(h, "oauth-2025-04-20")
	case config.KindCodexAccount:
		if tok.AccountID != "" {
			h.Set("Chatgpt-Account-Id", tok.AccountID)
		}
	}
}

// addBeta adds flag to the anthropic-beta list unless present: an OAuth
// access token is accepted only with the oauth beta.
func addBeta(h *fasthttp.RequestHeader, flag string) {
	cur := h.Peek("Anthropic-Beta")
	for _, f := range bytes.Split(cur, []byte{','}) {
		if string(bytes.TrimSpace(f)) == flag {
			return
		}
	}
	if len(cur) == 0 {
		h.Set("Anthropic-Beta", flag)
		return
	}
	h.Set("Anthropic-Beta", string(cur)+","+flag)
}

// accountAttempt reads an account's answer for what it says about the
// account (a used-up quota window, a ban, a refused token, passive
// window state) and adjusts the attempt's outcome: an expired token is
// refreshed and the same account tried again; a used-up window rests
// the whole account until its (capped) reset. reason is the attempt's
// failure class ("" for none), as backoff returns it.
func (x *exchange) accountAttempt(err error, status int, b provider.Backoff, reason string) (provider.Backoff, string) {
	p, cred := x.target.Provider, x.try.cred
	if err != nil || cred == nil || !p.IsAccount() {
		return b, reason
	}
	m := x.s.accts
	name := cred.Name
	x.s.metrics.AccountRequest(name, status)
	now := x.s.now()
	typ := config.AccountType(p.Kind)
	hdr := func(k string) []byte { return x.upResp.Header.Peek(k) }
	if status < 400 {
		m.Observe(name, accounts.ReadSignal(typ, status, hdr, nil, now))
		if status == fasthttp.StatusOK && x.isEventStream() && x.try.aggregate {
			if data := x.aggregateStream(); data != nil {
				body, st := streamErrorBody(data)
				x.s.log.Printf("accounts: %s answered 200 with an error event (as status %d)", name, st)
				return x.accountFailed(name, typ, st, hdr, body, now, provider.Backoff{Base: x.s.cfg.Failover.ServerError.D()}, "5xx")
			}
		} else if status == fasthttp.StatusOK && x.isEventStream() {
			if data := x.peekStreamError(); data != nil {
				// An error inside a 200 stream, before the first byte
				// reached the client: fail over like any error.
				body, st := streamErrorBody(data)
				x.s.log.Printf("accounts: %s answered 200 with an error event (as status %d)", name, st)
				return x.accountFailed(name, typ, st, hdr, body, now, provider.Backoff{Base: x.s.cfg.Failover.ServerError.D()}, "5xx")
			}
		}
		if status == fasthttp.StatusOK && p.Kind == config.KindGeminiAccount {
			x.unwrapCodeAssist()
		}
		m.Succeeded(name)
		return b, reason
	}
	if status == fasthttp.StatusUnauthorized && x.try.acct != nil {
		if m.Rejected(context.Background(), name, x.try.acct) == nil {
			x.try.tried &^= 1 << (cred.Index % 64) // try the account again with its new token
			return provider.Backoff{}, "401"
		}
	}
	return x.accountFailed(name, typ, status, hdr, x.errorBody(), now, b, reason)
}

// accountFailed applies a failed answer's signals (quota rest, ban) and
// returns the attempt's backoff and failure reason.
func (x *exchange) accountFailed(name, typ string, status int, hdr accounts.Header, body []byte, now time.Time, b provider.Backoff, reason string) (provider.Backoff, string) {
	m := x.s.accts
	sig := accounts.ReadSignal(typ, status, hdr, body, now)
	until, banned := m.Observe(name, sig)
	switch {
	case banned:
		x.s.metrics.AccountCooldown(name, "banned")
		return provider.Backoff{Base: 24 * time.Hour}, "banned"
	case !until.IsZero():
		x.s.metrics.AccountCooldown(name, "quota")
		x.s.log.Printf("accounts: %s rests until %s (%s)", name, until.UTC().Format(time.RFC3339), sig.Reason)
		return provider.Backoff{Base: until.Sub(now)}, "quota"
	}
	return b, reason
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

// codexDropped are request members the ChatGPT backend refuses; a
// translated request may carry them (its client's sampling settings).
var codexDropped = [...]string{"max_output_tokens", "max_completion_tokens", "temperature", "top_p", "prompt_cache_retention", "safety_identifier", "stream_options"}

// accountBody adapts a codex-account request to what the ChatGPT backend
// requires: "stream": true (a non-streamed client is answered by
// aggregating the stream), "store": false and "instructions" (empty when
// the client put its instructions in the input, as Codex does), and
// without the sampling members the backend refuses. The body is copied
// once when anything changes; a request Codex sent usually goes as is.
func (x *exchange) accountBody() (int, string) {
	switch x.target.Provider.Kind {
	case config.KindGeminiAccount:
		return x.codeAssistBody()
	case config.KindCodexAccount:
	default:
		return 0, ""
	}
	x.try.aggregate = !x.stream
	body, ok := x.upRequestBody()
	if !ok {
		return fasthttp.StatusInternalServerError, "cannot read the request body back"
	}
	var add []byte
	if !gjson.GetBytes(body, "store").Exists() {
		add = append(add, `"store":false,`...)
	}
	if !gjson.GetBytes(body, "instructions").Exists() {
		add = append(add, `"instructions":"",`...)
	}
	stream := gjson.GetBytes(body, "stream")
	if !stream.Exists() {
		add = append(add, `"stream":true,`...)
	}
	drop := false
	for _, k := range codexDropped {
		drop = drop || gjson.GetBytes(body, k).Exists()
	}
	if len(add) == 0 && stream.Raw == "true" && !drop {
		return 0, ""
	}
	if !codec.IsObject(bytes.TrimLeft(body, " \t\r\n")) {
		return fasthttp.StatusBadRequest, "the request body is not a JSON object"
	}
	b := pool.Get(len(body) + len(add))
	b.B = appendCodexBody(append(b.B[:0], '{'), add, body)
	if x.try.acctBody != nil {
		pool.Put(x.try.acctBody)
	}
	x.try.acctBody = b
	x.setUpBody(b.B) // a body stream like every upstream body (the call binds the client watcher through it)
	return 0, ""
}

// appendCodexBody appends to dst (which holds "{") the members add, then
// body's members but the dropped ones, with stream set to true, and the
// closing brace: one pass over the body, its values copied as they are.
func appendCodexBody(dst, add, body []byte) []byte {
	dst = append(dst, add...)
	m := codec.ObjectMembers(bytes.TrimLeft(body, " \t\r\n"))
	for {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		if dropped(k) {
			continue
		}
		if string(k) == "stream" {
			v = []byte("true")
		}
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, '"', ':')
		dst = append(dst, v...)
		dst = append(dst, ',')
	}
	if dst[len(dst)-1] == ',' {
		dst = dst[:len(dst)-1]
	}
	return append(dst, '}')
}

func dropped(k []byte) bool {
	for _, d := range codexDropped {
		if string(k) == d {
			return true
		}
	}
	return false
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
