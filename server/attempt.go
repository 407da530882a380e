package server

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/accounts"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// An upstream request may take several attempts before its first byte
// reaches the client: a failed one (a refused connection, a timeout, 429,
// 401/403, 5xx) rests its (credential, model) pair in the cooldown table
// and the request moves to the provider's next usable credential, then to
// the other providers serving the model, then along the model's
// fallbacks that the client key may use, translated as needed, at most
// failover.max_attempts calls within failover.deadline. The last failure is what the client sees when
// no candidate is left. Once a response starts there is no failover.

// attemptState is the per-request failover state, reset with the exchange.
type attemptState struct {
	cred      *provider.Credential // the credential of the current attempt
	acct      *accounts.Token      // the account token it was signed with (account providers)
	peek      peekReader           // an account answer's bytes read ahead (accountpeek.go)
	acctBody  *pool.Buffer         // an account request's body with the members its backend requires
	aggregate bool                 // a non-streamed client served from an account's stream
	unwrap    unwrapReader         // a Code Assist stream unwrapped as it is read (codeassist.go)
	model     uint64               // Hash of the upstream model (cooldown key)
	session   uint64               // conversation hash for affinity, or 0
	tried     uint64               // credentials of the current provider tried (bit per index)
	attempts  int                  // upstream calls made
	alts      []provider.Target    // alternatives, filled on the first failure
	altNext   int                  // next alternative to try
	altsDone  bool                 // alts is filled
	deadline  int64                // no attempt starts after this (Unix ns)

	clientHdr fasthttp.RequestHeader // client headers, when retries run off the handler goroutine
	query     []byte                 // the client's query string, likewise
	detached  bool                   // clientHdr/query hold the client's request

	meta, cacheKey []byte // the body's metadata and prompt_cache_key (views), for affinity
	sessionDone    bool   // session is computed

	// abandoned is set (by the stream's goroutine) when the client left
	// while attempts run beside keep-alive pings: no new attempt starts.
	abandoned atomic.Bool
	// answered: the last call's upstream answered 200, so a cut answer
	// still consumed tokens (keyUsage).
	answered bool
}

func (a *attemptState) reset() {
	a.cred, a.model, a.session, a.tried, a.attempts = nil, 0, 0, 0, 0
	a.answered = false
	a.acct, a.aggregate = nil, false
	a.peek.reset()
	a.unwrap.reset(nil)
	if a.acctBody != nil {
		pool.Put(a.acctBody)
		a.acctBody = nil
	}
	a.meta, a.cacheKey, a.sessionDone = nil, nil, false
	a.abandoned.Store(false)
	clear(a.alts) // no Provider of an old registry outlives a reload here
	a.alts, a.altNext, a.altsDone, a.deadline = a.alts[:0], 0, false, 0
	if a.detached {
		a.clientHdr.Reset()
		a.query = a.query[:0]
		a.detached = false
	}
}

// pickFirst picks the credential of the first attempt: the target's,
// else (all resting) the first alternative with a usable one. When every
// candidate rests it answers 429 with Retry-After at the soonest recovery
// and returns false.
func (x *exchange) pickFirst() bool {
	now := x.s.now().UnixNano()
	x.try.deadline = now + int64(x.s.cfg.Failover.Deadline.D())
	var soonest int64
	for {
		if x.pickOn(now) {
			return true
		}
		if s := x.soonest(now); s > 0 && (soonest == 0 || s < soonest) {
			soonest = s
		}
		if !x.nextTarget() {
			break
		}
	}
	x.writeAllCooling(soonest - now)
	return false
}

// pickOn picks a usable credential of the current target's provider,
// noting it in x.try. A keyless provider always succeeds.
func (x *exchange) pickOn(now int64) bool {
	p := x.target.Provider
	x.try.model = provider.Hash(x.upModel)
	if p.Keyless() {
		x.try.cred = nil
		ok := x.try.tried == 0
		x.try.tried = 1
		return ok
	}
	if p.Affinity() && !x.try.sessionDone {
		x.try.session, x.try.sessionDone = x.sessionHash(), true
	}
	c, _ := p.Pick(x.try.model, x.try.session, x.try.tried, now)
	if c == nil {
		return false
	}
	x.try.cred = c
	x.try.tried |= 1 << (c.Index % 64)
	return true
}

// soonest is when a credential of the current target recovers.
func (x *exchange) soonest(now int64) int64 {
	p := x.target.Provider
	if p.Keyless() {
		return 0
	}
	_, s := p.Pick(x.try.model, x.try.session, 0, now)
	return s
}

// nextTarget moves x.target to the next alternative; false when none is
// left.
func (x *exchange) nextTarget() bool {
	if !x.try.altsDone {
		x.try.altsDone = true
		x.try.alts = x.s.reg.AppendAlternatives(x.try.alts[:0], pool.B2S(x.model), x.target, x.rt.dialect)
		x.try.alts = x.keepAllowed(x.try.alts, x.target.Model)
	}
	if x.try.altNext >= len(x.try.alts) {
		return false
	}
	x.target = x.try.alts[x.try.altNext]
	x.try.altNext++
	x.try.tried = 0
	x.upModel = x.model
	if x.target.Aliased {
		x.upModel = pool.S2B(x.target.Model)
	}
	return true
}

// keepAllowed drops from alts the targets x's key may not use, keeping
// their order: a target serving first (the upstream model the request
// resolved to, which the key was allowed) is allowed, and any other (a
// fallback to another model) only when the key's models allow its model
// name, as if the client had asked for it. It allocates nothing.
func (x *exchange) keepAllowed(alts []provider.Target, first string) []provider.Target {
	if x.key == nil {
		return alts
	}
	kept := alts[:0]
	for _, t := range alts {
		if t.Model == first || x.key.Allows(t.Model) {
			kept = append(kept, t)
		}
	}
	clear(alts[len(kept):]) // no Provider of an old registry outlives a reload here
	return kept
}

// writeAllCooling answers 429 when every candidate rests, with
// Retry-After rounded up to whole seconds.
func (x *exchange) writeAllCooling(wait int64) {
	if wait <= 0 && x.writeNoAccount() {
		return
	}
	setRetryAfter(x.ctx, wait)
	x.result = resultUpstreamFailed
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusTooManyRequests, "every credential for model "+clipString(x.model)+" is resting after upstream failures; retry later")
}

// attempt builds the upstream request for the current target and
// credential. It does not touch x.ctx once detached (retries may run
// beside a keep-alive stream). On failure it returns the status and
// message to answer with.
func (x *exchange) buildAttempt() (status int, msg string) {
	if status, msg := x.accountRefusal(); status != 0 {
		return status, msg
	}
	if status, msg := x.buildRequest(); status != 0 {
		return status, msg
	}
	return x.accountBody()
}

// buildRequest is buildAttempt's request for any provider.
func (x *exchange) buildRequest() (status int, msg string) {
	d, up := x.rt.dialect, x.target.Provider.Dialect
	x.upReq.Reset()
	x.splice = modelSplice{} // set again below when this attempt splices (rewindBody reads it)
	if up == d {
		x.translated = false
		x.dropTranslation()
		x.buildUpstream(true)
		if x.s.crossDialect && x.tagged {
			return x.buildSorted()
		}
		if x.target.Aliased && d != codec.DialectGemini {
			x.setUpSplice()
		} else {
			x.setUpBody(x.body)
		}
		return 0, ""
	}
	if !translate.Supported(d) || !translate.Supported(up) {
		return fasthttp.StatusNotImplemented, "translation from " + d.String() + " to " + up.String() + " is not available"
	}
	if status, msg := x.appendUpBody(up); status != 0 {
		return status, msg
	}
	x.buildUpstream(false)
	x.setUpBody(x.upBody.B)
	if x.ts != nil {
		translate.ReleaseStream(x.ts)
	}
	x.ts = translate.AcquireStream(d, up, &x.req, x.stream)
	x.ts.SetEstimate(x)
	x.ts.SetErrorPrefix(x.providerPrefix())
	x.translated = true
	return 0, ""
}

// dropTranslation forgets what an earlier translated attempt set up, so
// that a same-dialect attempt's usage and errors are read as such.
func (x *exchange) dropTranslation() {
	if x.ts != nil {
		translate.ReleaseStream(x.ts)
		x.ts = nil
	}
	if x.decoded {
		x.req.Reset()
		x.decoded = false
	}
}

// appendUpBody writes the client's request for an upstream of dialect up
// into x.upBody, decoding it once, with replay tokens sorted by origin
// (translate.AppendRequestFrom).
func (x *exchange) appendUpBody(up codec.Dialect) (status int, msg string) {
	d := x.rt.dialect
	if !x.decoded {
		if err := translate.DecodeRequest(d, &x.req, x.body); err != nil {
			return fasthttp.StatusBadRequest, "cannot read request: " + err.Error()
		}
		x.req.Stream = x.stream
		x.req.Created = x.s.now().Unix()
		x.decoded = true
	}
	x.req.Model = x.model
	if x.upBody == nil {
		x.upBody = pool.Get(translate.RequestSizeHint(len(x.body)))
	}
	var err error
	x.upBody.B, err = translate.AppendRequestFrom(d, up, x.upBody.B[:0], &x.req, x.upModel)
	if err != nil {
		return fasthttp.StatusBadRequest, err.Error()
	}
	return 0, ""
}

// buildSorted is the same-dialect body of a conversation that passed
// through another vendor: it holds replay tokens slipstream tagged, which
// this provider would reject, so the request is rewritten through the
// neutral form with foreign tokens left out (fields the neutral form does
// not carry are lost; this happens only after a cross-vendor hop). The
// response is still relayed as it comes.
func (x *exchange) buildSorted() (status int, msg string) {
	if !translate.Supported(x.rt.dialect) {
		x.setUpBody(x.body)
		return 0, ""
	}
	if status, msg := x.appendUpBody(x.rt.dialect); status != 0 {
		return status, msg
	}
	x.setUpBody(x.upBody.B)
	return 0, ""
}

// detach copies what later attempts need from the client's request, so
// they can run after the handler handed x off (keep-alive streams).
func (x *exchange) detach() {
	x.ctx.Request.Header.CopyTo(&x.try.clientHdr)
	x.try.query = append(x.try.query[:0], x.ctx.URI().QueryString()...)
	x.try.detached = true
}

// clientHeader is the client's request header (a copy once detached).
func (x *exchange) clientHeader() *fasthttp.RequestHeader {
	if x.try.detached {
		return &x.try.clientHdr
	}
	return &x.ctx.Request.Header
}

// clientQuery is the client's query string (a copy once detached).
func (x *exchange) clientQuery() []byte {
	if x.try.detached {
		return x.try.query
	}
	return x.ctx.URI().QueryString()
}

// attempts calls the upstream, failing over while a failed attempt has a
// successor; it returns the last call's error (nil: x.upResp holds the
// response headers to answer with).
func (x *exchange) attempts() error {
	for {
		err := x.call()
		x.try.attempts++
		if x.try.abandoned.Load() {
			return err // the client left: no cooldown, no further attempt
		}
		x.s.metrics.Attempt(x.target.Provider.Name)
		status := 0
		if err == nil {
			status = x.upResp.StatusCode()
		}
		x.try.answered = status == fasthttp.StatusOK
		b, reason := x.backoff(err, status)
		b, reason = x.accountAttempt(err, status, b, reason)
		if reason == "" {
			if status < 300 && x.try.cred != nil {
				x.target.Provider.Cooldowns().Recover(x.try.cred.ID, x.try.model)
			}
			return err
		}
		now := x.s.now().UnixNano()
		x.rest(err, now, b, &reason)
		if x.try.attempts >= x.s.cfg.Failover.MaxAttempts || now >= x.try.deadline || x.try.abandoned.Load() || !x.advance(now) {
			return err
		}
		x.s.metrics.Failover(reason)
	}
}

// rest rests what a failed attempt showed to be failing. A connection
// that could not be made (DNS, refused, TLS, proxy, connect timeout) says
// nothing about the credential: the provider is down for all of them, so
// every credential of it rests for the model and the request moves to the
// next provider. A full connection pool (slipstream's own limit) or a
// compressed stream (a provider setting) rests nothing and moves on to the
// next provider. Anything else rests the attempt's credential.
func (x *exchange) rest(err error, now int64, b provider.Backoff, reason *string) {
	p := x.target.Provider
	cause := upstream.CauseOther
	if err != nil {
		cause = upstream.Classify(err)
	}
	switch cause {
	case upstream.CausePoolFull, upstream.CauseEncoding:
		x.try.tried = ^uint64(0)
		if cause == upstream.CausePoolFull {
			*reason = reasonPoolFull
		}
		return
	}
	if connectFailed(cause) {
		x.try.tried = ^uint64(0)
		for i := range p.Credentials() {
			p.Cooldowns().Cool(p.Credentials()[i].ID, x.try.model, now, b)
		}
		x.s.metrics.Cooldown(*reason)
		return
	}
	if x.try.cred != nil {
		p.Cooldowns().Cool(x.try.cred.ID, x.try.model, now, b)
		x.s.metrics.Cooldown(*reason)
	}
}

// advance prepares the next attempt on the next usable candidate and
// then discards the failed response. False leaves the failed response
// (and the target it came from) in place for the client.
func (x *exchange) advance(now int64) bool {
	saved, savedModel, savedCred, savedTried := x.target, x.upModel, x.try.cred, x.try.tried
	for {
		if x.pickOn(now) {
			if status, _ := x.buildAttempt(); status == 0 {
				break
			}
			// This candidate cannot take the request (no translation
			// to its dialect): move on.
			x.try.tried = ^uint64(0)
			continue
		}
		if !x.nextTarget() {
			x.target, x.upModel, x.try.cred, x.try.tried = saved, savedModel, savedCred, savedTried
			return false
		}
	}
	x.closeUpstream(errFailover)
	x.upResp.Reset()
	return true
}

// errFailover ends a failed upstream response that a next attempt
// replaces.
var errFailover = errors.New("the attempt failed over to another credential")

// Failure reasons, for metrics (failovers and cooldowns by reason).
const (
	reasonConnect     = "connect"
	reasonServerError = "server_error"
	reasonRateLimited = "rate_limited"
	reasonAuth        = "unauthorized"
	reasonPoolFull    = "pool_full"
)

// backoff classifies an attempt: reason is "" when it did not fail (no
// rest, no failover), else why, and b how long the credential rests.
func (x *exchange) backoff(err error, status int) (b provider.Backoff, reason string) {
	f := &x.s.cfg.Failover
	switch {
	case err != nil && connectFailed(upstream.Classify(err)):
		return connectBackoff(f), reasonConnect
	case err != nil:
		return provider.Backoff{Base: f.ServerError.D()}, reasonConnect
	case status >= 500:
		return provider.Backoff{Base: f.ServerError.D()}, reasonServerError
	case status == fasthttp.StatusTooManyRequests:
		if d, ok := retryAfter(x.upResp.Header.Peek("Retry-After"), x.s.now()); ok {
			return provider.Backoff{Base: d, Max: f.RateLimitedMax.D()}, reasonRateLimited
		}
		return provider.Backoff{Base: f.RateLimited.D(), Max: f.RateLimitedMax.D(), Exponential: true}, reasonRateLimited
	case status == fasthttp.StatusUnauthorized || status == fasthttp.StatusForbidden:
		return provider.Backoff{Base: f.Unauthorized.D()}, reasonAuth
	}
	return provider.Backoff{}, ""
}

// retryAfter parses a Retry-After value: delay seconds or an HTTP date.
func retryAfter(v []byte, now time.Time) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	if n, err := fasthttp.ParseUint(v); err == nil {
		return time.Duration(n) * time.Second, true
	}
	if t, err := fasthttp.ParseHTTPDate(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// forward sends the request to x.target, same dialect or translated, with
// failover (see attempts). It reports whether x was handed off.
func (s *Server) forward(x *exchange) bool {
	if status, msg := x.buildAttempt(); status != 0 && !x.advance(s.now().UnixNano()) {
		s.writeError(x.ctx, x.rt.dialect, status, msg) // and no other candidate takes the request
		return false
	}
	if x.stream && s.keepalive() > 0 {
		x.detach()
		return s.callWithKeepalive(x, x.translated)
	}
	return x.afterCall(x.attemptsWatched())
}

// sessionHeaders name a conversation: Claude Code's, then Codex's (it has
// sent both spellings).
var sessionHeaders = [...]string{"X-Claude-Code-Session-Id", "Session-Id", "Session_id"}

// sessionHash names the request's conversation for affinity: the
// provider's affinity_header, a client's session header, Claude Code's
// metadata.user_id or Codex's prompt_cache_key; 0 when there is none.
func (x *exchange) sessionHash() uint64 {
	h := x.clientHeader()
	if name := x.target.Provider.Config.AffinityHeader; name != "" {
		if v := h.Peek(name); len(v) > 0 {
			return provider.Hash(v)
		}
	}
	for _, name := range sessionHeaders {
		if v := h.Peek(name); len(v) > 0 {
			return provider.Hash(v)
		}
	}
	if codec.IsObject(x.try.meta) {
		if v := codec.Member(x.try.meta, "user_id"); len(v) > 0 {
			return provider.Hash(v)
		}
	}
	if len(x.try.cacheKey) > 0 {
		return provider.Hash(x.try.cacheKey)
	}
	return 0
}

// crossDialect reports whether reg's providers speak more than one
// dialect (the mock aside).
func crossDialect(reg *provider.Registry) bool {
	var seen codec.Dialect
	for _, p := range reg.Providers() {
		if p.IsMock() {
			continue
		}
		if seen != codec.DialectUnknown && p.Dialect != seen {
			return true
		}
		seen = p.Dialect
	}
	return false
}
