package server

import (
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
)

// requestPart is the client's request, as the handler admitted and read
// it: its route and key, its body, and what validation took from the body
// (model, stream flag). The handler and the request stages (prepare,
// decodeClient) write it; the later stages only read it.
type requestPart struct {
	ctx  *fasthttp.RequestCtx // nil once x is handed to a body stream
	rt   *route
	key  *clientKey
	size int64 // body bytes counted by admit

	id    requestID
	start time.Time // the handler's start

	model       []byte // client-facing model name, escaped content (a view into the body, or modelBuf)
	modelVal    []byte // the body's model member value, quotes included (a view into the body)
	modelBuf    []byte // the escaped model of a Gemini path, or an unescaped model name (scratch, kept)
	geminiModel []byte
	stream      bool

	body    []byte       // the client's request body (reqBody's bytes, or fasthttp's)
	tagged  bool         // body holds a string that starts with an origin tag (readTop)
	reqBody *pool.Buffer // the pooled buffer the body was read into

	req     codec.Request // the request in neutral form, when decoded (views into body)
	decoded bool          // req holds the client's request

	guard guardPart // the guardrails' checks of the body (guard.go)
}

// Reset gives the request's buffers back and forgets it; modelBuf is kept
// as scratch. The id and start are set by the next handler.
func (r *requestPart) Reset() {
	if r.reqBody != nil {
		pool.Put(r.reqBody)
		r.reqBody = nil
	}
	r.guard.Reset() // before the body it may point into goes back
	r.body, r.tagged = nil, false
	r.req.Reset()
	r.decoded = false
	r.ctx, r.rt, r.key = nil, nil, nil
	r.model, r.modelVal, r.geminiModel = nil, nil, nil
	r.stream = false
}
