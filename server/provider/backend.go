package provider

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/config"
)

// Backend is what a provider's kind adds to an upstream attempt beyond
// its dialect: which requests it refuses, how a request is signed and
// adapted, and what an answer says about the credential. Key providers
// use KeyBackend; subscription accounts implement it in server/accounts.
// The request path calls these and never asks which kind it serves.
// Implementations must be safe for concurrent use.
type Backend interface {
	// Refuse returns the status and message of a request the backend
	// cannot serve as sent (slipstream does not disguise one client as
	// another), or 0.
	Refuse(c Call) (status int, msg string)
	// Sign puts cred where the upstream wants it in c's request header.
	// A nil cred signs nothing.
	Sign(c Call, cred *Credential)
	// Prepare adapts the built request (body, URL) to what the upstream
	// takes; a status other than 0 refuses the attempt with msg.
	Prepare(c Call) (status int, msg string)
	// Classify reads an answer (the upstream's status; the call did not
	// fail) for what it says about the attempt's credential. Only a
	// judgement with Set replaces the attempt's verdict.
	Classify(c Call, status int) Judgement
}

// Judgement is a backend's reading of an answer: when Set, the attempt
// failed for Reason ("" : it stands) and its credential rests Rest;
// Again makes the credential a candidate once more.
type Judgement struct {
	Set    bool
	Reason string
	Rest   Backoff
	Again  bool
}

// Call is one upstream attempt as its provider's backend sees it. The
// server implements it over the attempt; the slices it returns are
// views valid until the attempt ends.
type Call interface {
	Provider() *Provider
	Credential() *Credential // the attempt's, or nil
	Dialect() codec.Dialect  // the client's
	Streamed() bool          // the client asked for a stream
	Counting() bool          // a count_tokens call
	UserAgent() []byte       // the client's
	ClientBody() []byte
	UpModel() []byte
	Header() *fasthttp.RequestHeader // the upstream request's

	// Token is what Sign stored with SetToken for this attempt, or nil.
	Token() any
	SetToken(t any)
	// UpBody is the upstream body as built; false when it cannot be read
	// back. SetUpBody replaces it with b, which the call takes (b was
	// returned by BodyBuffer).
	UpBody() ([]byte, bool)
	BodyBuffer(size int) []byte
	SetUpBody(b []byte)
	// SetPath points the request at the provider's base URL + path.
	SetPath(path string)
	// Aggregate serves a client that asked for no stream from the
	// upstream's stream (read whole before the answer).
	Aggregate()

	// ResponseHeader is a header of the answer.
	ResponseHeader(k string) []byte
	// StreamError returns, for a 200 event stream, the error its first
	// event (or, aggregated, any event) reports as an error body, and
	// the status that stands for; ok false when there is none.
	StreamError() (body []byte, status int, ok bool)
	// ErrorBody reads an error answer (bounded), keeping it for the client.
	ErrorBody() []byte
	// Unwrap makes a 200 answer in an envelope (Code Assist) its inner
	// response, as the relay reads it.
	Unwrap()
}

// KeyBackend is the backend of providers signed with an API key: the
// key goes in the header the provider's API reads; nothing else changes.
type KeyBackend struct{}

var _ Backend = KeyBackend{}

// Refuse implements Backend: a key provider takes every request.
func (KeyBackend) Refuse(Call) (int, string) { return 0, "" }

// Prepare implements Backend: the request goes as built.
func (KeyBackend) Prepare(Call) (int, string) { return 0, "" }

// Classify implements Backend: the attempt's verdict stands.
func (KeyBackend) Classify(Call, int) Judgement { return Judgement{} }

// Sign implements Backend.
func (KeyBackend) Sign(c Call, cred *Credential) {
	if cred == nil {
		return
	}
	h := c.Header()
	switch c.Provider().Kind {
	case config.KindAnthropic:
		h.Set("X-Api-Key", cred.Secret)
		if len(h.Peek("Anthropic-Version")) == 0 {
			h.Set("Anthropic-Version", "2023-06-01")
		}
	case config.KindGemini:
		h.Set("X-Goog-Api-Key", cred.Secret)
	default:
		h.Set("Authorization", "Bearer "+cred.Secret)
	}
}

// Backend returns p's backend: the accounts' (SetAccounts), else
// KeyBackend.
func (p *Provider) Backend() Backend {
	if p.backend != nil {
		return p.backend
	}
	return KeyBackend{}
}
