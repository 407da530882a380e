// Package failover decides where an upstream request goes next: given
// the registry (its providers, their credentials and cooldown table), the
// time, the client key and the outcome of the last attempt, it names the
// next candidate (credential, provider, fallback) or says the last
// answer is final. It opens no socket and reads no request: the server
// makes the calls and feeds their outcomes in.
//
// An upstream request may take several attempts before its first byte
// reaches the client: a failed one (a refused connection, a timeout, 429,
// 401/403, 5xx) rests its (credential, model) pair in the cooldown table
// and the request moves to the provider's next usable credential, then
// to the other providers serving the model, then along the model's
// fallbacks that the client key may use, at most failover.max_attempts
// calls within failover.deadline. The last failure is what the client
// sees when no candidate is left. Once a response starts there is no
// failover.
package failover

import (
	"time"

	"slipstream/server/config"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// Failure reasons, for metrics (failovers and cooldowns by reason).
const (
	ReasonConnect     = "connect"
	ReasonServerError = "server_error"
	ReasonRateLimited = "rate_limited"
	ReasonAuth        = "unauthorized"
	ReasonPoolFull    = "pool_full"
)

// Outcome is what one attempt showed.
type Outcome struct {
	// Failed is set when the call ended without an answer; Cause says why.
	Failed bool
	Cause  upstream.Cause
	// Status is the upstream's answer when the call did not fail.
	Status int
	// RetryAfter is a 429's Retry-After, when HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// Sent is set once a byte of the answer reached the client: from then
	// on a failure is reported in-band and nothing else is tried.
	Sent bool
}

// Scope is what a failure rests.
type Scope uint8

const (
	// RestCredential rests the attempt's credential for the model.
	RestCredential Scope = iota
	// RestProvider rests every credential of the provider for the model
	// and moves on to the next provider: it could not be reached, which
	// says nothing about the credential.
	RestProvider
	// RestNone rests nothing and moves on to the next provider: a full
	// connection pool (slipstream's own limit) or a compressed stream (a
	// provider setting).
	RestNone
)

// Verdict is what an attempt's outcome means for the request.
type Verdict struct {
	// Reason is "" when the attempt stands (a success, or an answer that
	// is the client's to read): nothing rests and nothing else is tried.
	// Otherwise it names the failure class.
	Reason string
	Rest   provider.Backoff
	Scope  Scope
	// Again makes the attempt's credential a candidate once more (an
	// account whose expired token was just refreshed).
	Again bool
}

// Failed reports whether v is a failure that rests and fails over.
func (v Verdict) Failed() bool { return v.Reason != "" }

// Classify returns the verdict on o under the rests of f: the failover
// table of the credentials guide, row by row. It allocates nothing.
func Classify(f *config.Failover, o Outcome) Verdict {
	switch {
	case o.Sent:
		return Verdict{}
	case o.Failed:
		return classifyError(f, o.Cause)
	case o.Status >= 500:
		return Verdict{Reason: ReasonServerError, Rest: provider.Backoff{Base: f.ServerError.D()}}
	case o.Status == 429 && o.HasRetryAfter:
		return Verdict{Reason: ReasonRateLimited, Rest: provider.Backoff{Base: o.RetryAfter, Max: f.RateLimitedMax.D()}}
	case o.Status == 429:
		return Verdict{Reason: ReasonRateLimited, Rest: provider.Backoff{Base: f.RateLimited.D(), Max: f.RateLimitedMax.D(), Exponential: true}}
	case o.Status == 401 || o.Status == 403:
		return Verdict{Reason: ReasonAuth, Rest: provider.Backoff{Base: f.Unauthorized.D()}}
	}
	return Verdict{}
}

// classifyError is Classify's verdict on a call that got no answer.
func classifyError(f *config.Failover, c upstream.Cause) Verdict {
	switch {
	case c == upstream.CausePoolFull:
		return Verdict{Reason: ReasonPoolFull, Scope: RestNone}
	case c == upstream.CauseEncoding, c == upstream.CauseHeadTooLarge:
		return Verdict{Reason: ReasonConnect, Scope: RestNone} // the provider's answer, not its health
	case ConnectFailed(c):
		return Verdict{Reason: ReasonConnect, Rest: ConnectBackoff(f), Scope: RestProvider}
	}
	return Verdict{Reason: ReasonConnect, Rest: provider.Backoff{Base: f.ServerError.D()}}
}

// ConnectFailed reports whether a call failed before a connection to the
// provider was made: that says the provider (or the way to it) is down,
// not that a credential is bad.
func ConnectFailed(c upstream.Cause) bool {
	switch c {
	case upstream.CauseDNS, upstream.CauseRefused, upstream.CauseTLS, upstream.CauseProxy, upstream.CauseConnectTimeout:
		return true
	}
	return false
}

// ConnectBackoff is the rest after a connection that could not be made:
// failover.connect_error, doubling with each consecutive failure of the
// pair, at most failover.server_error. A provider that restarts is used
// again a second later; one that stays down is tried ever less often.
func ConnectBackoff(f *config.Failover) provider.Backoff {
	return provider.Backoff{Base: f.ConnectError.D(), Max: f.ServerError.D(), Exponential: true}
}
