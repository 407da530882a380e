package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/accounts"
	"slipstream/server/failover"
	"slipstream/server/provider"
)

// backendCall is the attempt an exchange is making, as its provider's
// backend sees it (provider.Call): the exchange itself under another
// method set, so handing it over allocates nothing.
type backendCall exchange

var _ provider.Call = (*backendCall)(nil)

// backend returns the attempt's provider backend and the call it works on.
func (x *exchange) backend() (provider.Backend, *backendCall) {
	return x.target.Provider.Backend(), (*backendCall)(x)
}

// judge lets the attempt's backend read an answer (the call did not
// fail) and returns the attempt's verdict: v, or the backend's judgement.
func (x *exchange) judge(err error, status int, v failover.Verdict) failover.Verdict {
	if err != nil || x.try.cred == nil {
		return v
	}
	b, c := x.backend()
	j := b.Classify(c, status)
	if !j.Set {
		return v
	}
	return failover.Verdict{Reason: j.Reason, Rest: j.Rest, Again: j.Again}
}

func (c *backendCall) x() *exchange { return (*exchange)(c) }

func (c *backendCall) Provider() *provider.Provider     { return c.target.Provider }
func (c *backendCall) Credential() *provider.Credential { return c.try.cred }
func (c *backendCall) Dialect() codec.Dialect           { return c.rt.dialect }
func (c *backendCall) Streamed() bool                   { return c.stream }
func (c *backendCall) Counting() bool                   { return c.counting }
func (c *backendCall) UserAgent() []byte                { return c.x().client().ua }
func (c *backendCall) ClientBody() []byte               { return c.body }
func (c *backendCall) UpModel() []byte                  { return c.upModel }
func (c *backendCall) Aggregate()                       { c.try.aggregate = true }
func (c *backendCall) ErrorBody() []byte                { return c.x().errorBody() }
func (c *backendCall) Unwrap()                          { c.x().unwrapCodeAssist() }
func (c *backendCall) UpBody() ([]byte, bool)           { return c.x().upRequestBody() }
func (c *backendCall) ResponseHeader(k string) []byte   { return c.upResp.Header.Peek(k) }

func (c *backendCall) Header() *fasthttp.RequestHeader { return &c.upReq.Header }

// Token is the account token the attempt was signed with, or nil.
func (c *backendCall) Token() any {
	if c.try.acct == nil {
		return nil
	}
	return c.try.acct
}

func (c *backendCall) SetToken(t any) { c.try.acct, _ = t.(*accounts.Token) }

// BodyBuffer returns a pooled buffer of at least size bytes for the body
// SetUpBody takes next; the body it replaces stays readable meanwhile.
func (c *backendCall) BodyBuffer(size int) []byte {
	if c.try.acctNext == nil {
		c.try.acctNext = pool.Get(size)
	}
	return c.try.acctNext.B[:0]
}

// SetUpBody makes b (from BodyBuffer) the upstream body, as a body stream
// like every upstream body (the call binds the client watcher through it).
func (c *backendCall) SetUpBody(b []byte) {
	if c.try.acctBody != nil {
		pool.Put(c.try.acctBody)
	}
	c.try.acctBody, c.try.acctNext = c.try.acctNext, nil
	c.try.acctBody.B = b
	c.x().setUpBody(b)
}

// SetPath points the upstream request at the provider's base URL + path.
func (c *backendCall) SetPath(path string) {
	url := append(c.out[:0], c.target.Provider.BaseURL...)
	url = append(url, path...)
	c.upReq.URI().UpdateBytes(url)
	c.out = url[:0]
}

// StreamError reads a 200 event stream for an error before the first
// byte reaches the client: its first event (peekStreamError), or, for a
// client served from an aggregated stream, the whole stream
// (aggregateStream). The bytes read stay in front of the body.
func (c *backendCall) StreamError() (body []byte, status int, ok bool) {
	x := c.x()
	if !x.isEventStream() {
		return nil, 0, false
	}
	var data []byte
	if x.try.aggregate {
		data = x.aggregateStream()
	} else {
		data = x.peekStreamError()
	}
	if data == nil {
		return nil, 0, false
	}
	body, status = translate.ErrorSignal(data)
	return body, status, true
}
