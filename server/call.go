package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/mock"
	"slipstream/server/provider"
)

// callPart is the upstream call of the current attempt: the target the
// failover plan chose, the request sent to it and the response head it
// answered with (or a mock's answer). The attempt stages (upstream.go,
// named.go, the forwarders) own it.
type callPart struct {
	target     provider.Target
	upModel    []byte // upstream model name, escaped
	translated bool   // the upstream speaks another dialect
	counting   bool   // a count_tokens call forwarded to the provider

	upReq  fasthttp.Request
	upResp fasthttp.Response
	upBody *pool.Buffer  // translated upstream body, given back once sent (modelSplice.sent)
	upFor  codec.Dialect // the dialect upBody was built for
	splice modelSplice   // the upstream body, handed to fasthttp as a body stream
	urlBuf []byte        // scratch for the upstream URL and User-Agent, copied out by fasthttp
	upRead []byte        // a whole upstream body read (readUpstreamBody); views of it live until release
	answer *mock.Answer  // a mock provider's answer, made on first use
	pings  pings         // keep-alive pings while the call waits for a head (keepalive.go)

	// errPrefix is "provider NAME: " of the current target, and msgBuf a
	// message built with it (named.go); both scratch, kept.
	errPrefix, msgBuf []byte
}

// Reset forgets the call and gives its buffers back. The caller has
// closed the upstream body (closeUpstream) first.
func (c *callPart) Reset() {
	if c.upBody != nil {
		pool.Put(c.upBody)
		c.upBody = nil
	}
	if c.answer != nil {
		c.answer.Reset()
	}
	c.upReq.Reset()
	c.upResp.Reset()
	c.urlBuf, c.upRead = trimScratch(c.urlBuf), trimScratch(c.upRead)
	c.upModel = nil
	c.pings = pings{tick: c.pings.tick} // the bound tick stays with the pooled exchange
	c.translated, c.counting, c.target = false, false, provider.Target{}
	c.splice = modelSplice{}
}

// dropUpBody gives the translated upstream body back once the upstream
// has answered with a stream: no attempt sends it again, and a live
// stream must not hold what the provider already has.
func (c *callPart) dropUpBody() {
	if c.upBody != nil {
		pool.Put(c.upBody)
		c.upBody = nil
		c.splice = modelSplice{}
	}
}
