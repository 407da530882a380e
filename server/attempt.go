package server

import (
	"errors"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/accounts"
	"slipstream/server/failover"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// attemptState is the per-request failover state, reset with the
// exchange: the plan (failover.Plan decides where each attempt goes), the
// client's request as attempts forward it, and what an account provider's
// backend keeps for the attempt.
type attemptState struct {
	plan     failover.Plan
	cred     *provider.Credential // the plan's candidate's credential, for the request builders
	attempts int                  // upstream calls made
	client   clientView           // the client's request as attempts forward it (clientview.go)

	acct      *accounts.Token // the account token it was signed with (account providers)
	peek      peekReader      // an account answer's bytes read ahead (accountpeek.go)
	acctBody  *pool.Buffer    // an account request's body with the members its backend requires
	acctNext  *pool.Buffer    // the next one, while it is built (backendCall.BodyBuffer)
	aggregate bool            // a non-streamed client served from an account's stream
	unwrap    unwrapReader    // a Code Assist stream unwrapped as it is read (codeassist.go)

	meta, cacheKey []byte // the body's metadata and prompt_cache_key (views), for affinity

	// abandoned is set (by the stream's goroutine) when the client left
	// while attempts run beside keep-alive pings: no new attempt starts.
	abandoned atomic.Bool
	// answered: the last call's upstream answered 200, so a cut answer
	// still consumed tokens (keyUsage).
	answered bool
}

// Reset forgets the request, keeping capacity.
func (a *attemptState) Reset() {
	a.plan.Reset()
	a.cred, a.attempts = nil, 0
	a.client.reset()
	a.answered = false
	a.acct, a.aggregate = nil, false
	a.peek.reset()
	a.unwrap.reset(nil)
	for _, b := range [2]**pool.Buffer{&a.acctBody, &a.acctNext} {
		if *b != nil {
			pool.Put(*b)
			*b = nil
		}
	}
	a.meta, a.cacheKey = nil, nil
	a.abandoned.Store(false)
}

// planRequest is what x's plan serves.
func (x *exchange) planRequest() failover.Request {
	return failover.Request{Registry: x.s.reg, Key: x.key, Model: x.model, Dialect: x.rt.dialect, First: x.target, Sessions: x}
}

// aim makes the plan's candidate the target of the request being built.
func (x *exchange) aim(c failover.Candidate) {
	x.target, x.try.cred = c.Target, c.Cred
	x.upModel = x.try.plan.UpModel()
	x.liveTarget() // the live view shows the attempt's provider and credential
}

// pickFirst picks the candidate of the first attempt (failover.Plan.Start).
// When every candidate rests it answers 429 with Retry-After at the
// soonest recovery and returns false.
func (x *exchange) pickFirst() bool {
	now := x.s.now().UnixNano()
	ok, soonest := x.try.plan.Start(x.planRequest(), now, int64(x.s.cfg.Failover.Deadline.D()))
	x.aim(x.try.plan.Candidate())
	if !ok {
		x.writeAllCooling(soonest - now)
	}
	return ok
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

// buildAttempt builds the upstream request for the current target and
// credential, with the provider's backend. It reads the client's request
// only as captured (x.client): retries may run beside a keep-alive
// stream, after the handler returned. On failure it returns the status
// and message to answer with.
func (x *exchange) buildAttempt() (status int, msg string) {
	b, c := x.backend()
	if status, msg := b.Refuse(c); status != 0 {
		return status, msg
	}
	if status, msg := x.buildRequest(); status != 0 {
		return status, msg
	}
	return b.Prepare(c)
}

// buildRequest is buildAttempt's request for any provider.
func (x *exchange) buildRequest() (status int, msg string) {
	if status, msg := x.guardBody(); status != 0 {
		return status, msg
	}
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
	x.setUpBuilt()
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
	x.upFor = up
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
	x.setUpBuilt()
	return 0, ""
}

// attempts calls the upstream, failing over while the plan has a
// candidate for a failed attempt; it returns the last call's error (nil:
// x.upResp holds the response headers to answer with).
func (x *exchange) attempts() error {
	if x.try.plan.Candidate().Target.Provider == nil {
		x.beginPlan() // a forwarded count: one attempt on its target
	}
	for {
		err := x.call()
		if x.attemptEnded(err) {
			return err
		}
	}
}

// beginPlan starts the failover plan on the request's target.
//
//go:noinline
func (x *exchange) beginPlan() { x.try.plan.Begin(x.planRequest()) }

// attemptEnded judges the attempt that just returned err and reports
// whether the request ends with it; otherwise the plan has moved to the
// next candidate. It is kept out of attempts (noinline) so that its
// values are not on the stack while the next call runs: the upstream call
// runs deep in a goroutine started per streamed request, whose stack
// would otherwise have to grow (and be copied) on every request.
//
//go:noinline
func (x *exchange) attemptEnded(err error) bool {
	x.try.attempts++
	if x.try.abandoned.Load() {
		return true // the client left: no cooldown, no further attempt
	}
	x.s.metrics.Attempt(x.target.Provider.Name)
	status := 0
	if err == nil {
		status = x.upResp.StatusCode()
	}
	x.try.answered = status == fasthttp.StatusOK
	v := failover.Classify(&x.s.cfg.Failover, x.outcome(err, status))
	v = x.judge(err, status, v)
	if !v.Failed() {
		if status < 300 {
			x.try.plan.Succeeded()
		}
		return true
	}
	now := x.s.now().UnixNano()
	cooled, retry := x.try.plan.Fail(v, now, x.try.attempts, x.s.cfg.Failover.MaxAttempts)
	if cooled {
		x.s.metrics.Cooldown(v.Reason)
		x.s.noteCooled(x.target.Provider, x.try.cred, v.Reason)
	}
	if !retry || x.try.abandoned.Load() || !x.advance(now) {
		return true
	}
	x.s.metrics.Failover(v.Reason)
	return false
}

// outcome is what the call that returned err (or answered status) showed.
func (x *exchange) outcome(err error, status int) failover.Outcome {
	if err != nil {
		return failover.Outcome{Failed: true, Cause: upstream.Classify(err)}
	}
	o := failover.Outcome{Status: status}
	if status == fasthttp.StatusTooManyRequests {
		o.RetryAfter, o.HasRetryAfter = failover.RetryAfter(x.upResp.Header.Peek("Retry-After"), x.s.now())
	}
	return o
}

// advance builds the request for the plan's next candidate that can take
// it, then discards the failed response. False leaves the failed
// response, and the target it came from, in place for the client.
func (x *exchange) advance(now int64) bool {
	p := &x.try.plan
	for p.Next(now) {
		x.aim(p.Candidate())
		if status, _ := x.buildAttempt(); status == 0 {
			p.Commit()
			x.closeUpstream(errFailover)
			x.upResp.Reset()
			return true
		}
		p.Skip() // no translation to its dialect, or its backend refuses the request
	}
	x.aim(p.Candidate()) // the attempted one
	return false
}

// errFailover ends a failed upstream response that a next attempt
// replaces.
var errFailover = errors.New("the attempt failed over to another credential")

// forward sends the request to x.target, same dialect or translated, with
// failover (see attempts). It reports whether x was handed off.
func (s *Server) forward(x *exchange) bool {
	if status, msg := x.buildAttempt(); status != 0 && !x.advance(s.now().UnixNano()) {
		s.writeError(x.ctx, x.rt.dialect, status, msg) // and no other candidate takes the request
		return false
	}
	if x.stream && s.keepalive() > 0 {
		return s.callWithKeepalive(x, x.translated)
	}
	return x.afterCall(x.attemptsWatched())
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
