package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
)

// maxUpstreamBody bounds a non-streamed upstream body slipstream reads
// whole to translate it.
const maxUpstreamBody = 64 << 20

// decodeClient reads the client's request into x.req, the neutral form.
// On failure it has answered 400 and returns false.
//
// The body was checked for shape only (prepare): string content that is
// not valid JSON goes to the upstream as it came, as on the same-dialect
// path, and the upstream's 400 reaches the client in its dialect. Strings
// that slipstream itself writes back to the client (the model name) were
// checked strictly.
func (x *exchange) decodeClient() bool {
	d := x.rt.dialect
	if err := translate.DecodeRequest(d, &x.req, x.body); err != nil {
		x.s.writeError(x.ctx, d, fasthttp.StatusBadRequest, "cannot read request: "+err.Error())
		return false
	}
	x.req.Model = x.model
	x.req.Stream = x.stream
	x.req.Created = x.s.now().Unix()
	return true
}

// respondTranslated answers from the upstream response headers: errors are
// rewritten into the client's error shape with the upstream's status,
// streams are pumped, and a whole body is translated at once.
func (x *exchange) respondTranslated() bool {
	ctx := x.ctx
	status := x.upResp.StatusCode()
	if status != fasthttp.StatusOK {
		body, _ := x.readUpstreamBody(1 << 20)
		e := translate.DecodeError(x.target.Provider.Dialect, body, status)
		x.rewordCredentialError(&e)
		x.nameUpstreamError(&e)
		copyRetryAfter(ctx, &x.upResp)
		x.s.writeErrorValue(ctx, x.rt.dialect, &e)
		return false
	}
	if x.stream && x.isEventStream() {
		setSSEHeaders(ctx)
		x.handOffStream(streamTranslated)
		return true
	}
	return x.respondTranslatedBody()
}

// respondTranslatedBody translates a whole non-streamed upstream body and
// hands the translation to passBody, which relays it and then releases x,
// so the bytes stay counted in flight until the client has read them. It
// reports whether x was handed off.
func (x *exchange) respondTranslatedBody() bool {
	ctx := x.ctx
	x.watch.start(x) // the body may drip: a departed client ends the read
	body, err := x.readUpstreamBody(maxUpstreamBody)
	x.watch.stop()
	if err != nil {
		x.result = resultUpstreamFailed
		x.s.writeError(ctx, x.rt.dialect, fasthttp.StatusBadGateway, "provider "+x.target.Provider.Name+": cannot read the upstream response")
		return false
	}
	out := pool.Get(len(body) + 1024)
	out.B, err = x.ts.AppendBody(out.B[:0], body)
	switch e := x.ts.Failure(); {
	case err != nil:
		pool.Put(out)
		x.result = resultUpstreamFailed
		x.s.writeError(ctx, x.rt.dialect, fasthttp.StatusBadGateway, "provider "+x.target.Provider.Name+": the upstream response is malformed: "+err.Error())
		return false
	case e != nil:
		// The body decoded to an error (an error object, or a body cut
		// before its end): an error status, not a 200 carrying it.
		pool.Put(out)
		x.result = resultUpstreamFailed
		x.s.writeErrorValue(ctx, x.rt.dialect, e)
		return false
	}
	// A streamed request the upstream answered with a whole body: the
	// stream encoder wrote that body as the client's event stream.
	if x.stream {
		setSSEHeaders(ctx)
	} else {
		ctx.SetContentType("application/json")
		out = x.guardWhole(out)
	}
	x.relayBody, x.relayOff = out, 0
	x.hold(len(body) + len(out.B)) // the upstream body stays in x.upRead until release
	x.handOffBody(len(out.B))
	return true
}

// relayTranslatedBody is relayTranslated for an upstream that answered a
// streamed request with a whole JSON body after keep-alive pings went out:
// the body is translated into the client's events.
func (x *exchange) relayTranslatedBody(out sink) {
	body, err := x.readUpstreamBody(maxUpstreamBody) // a view of x.upRead
	buf := pool.Get(len(body) + 1024)
	if err == nil {
		buf.B, err = x.ts.AppendBody(buf.B[:0], body)
	}
	if err != nil {
		x.result = resultUpstreamFailed
		e := codec.Error{Status: fasthttp.StatusBadGateway, Kind: codec.ErrAPI, Message: x.named(msgMalformed)}
		buf.B = x.ts.AppendError(buf.B[:0], &e)
	}
	flushOut(out, buf.B)
	pool.Put(buf)
}

// relayTranslated is the stream writer of the translated path: the pump
// with the translating step.
func (x *exchange) relayTranslated(out sink) {
	x.pump(out, translateStep{})
}

var msgMalformed = []byte("the upstream sent a malformed event")

// copyRetryAfter carries the upstream's Retry-After to the client.
func copyRetryAfter(ctx *fasthttp.RequestCtx, resp *fasthttp.Response) {
	if v := resp.Header.Peek("Retry-After"); len(v) > 0 {
		ctx.Response.Header.SetBytesV("Retry-After", v)
	}
}
