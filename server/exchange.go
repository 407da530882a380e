package server

import (
	"sync"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/anthropic"
	"slipstream/codec/gemini"
	"slipstream/codec/openai"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/mock"
	"slipstream/server/provider"
	"slipstream/tokenize"
)

// exchange is all the state of one request, pooled: the client's request
// in neutral form when it is translated, the upstream request and
// response, the SSE reader, and the output scratch. Nothing else is
// allocated per request in steady state.
type exchange struct {
	noCopy noCopy

	s    *Server
	ctx  *fasthttp.RequestCtx
	rt   *route
	key  *clientKey
	size int64 // body bytes counted by admit

	model       []byte // client-facing model name, escaped content (a view into the body, or modelBuf)
	modelBuf    []byte // the escaped model of a Gemini path
	geminiModel []byte
	stream      bool
	target      provider.Target
	upModel     []byte // upstream model name, escaped

	body    []byte       // the client's request body (x.reqBody's bytes, or fasthttp's)
	reqBody *pool.Buffer // the pooled buffer the body was read into

	req    codec.Request
	upReq  fasthttp.Request
	upResp fasthttp.Response
	upBody *pool.Buffer // translated upstream body
	out    []byte       // client output scratch for one event
	spans  []byte       // unescaped text spans while counting tokens
	rd     sse.Reader
	ts     *translate.Stream
	tok    *tokenize.Encoding // the model's encoding, once needed
	answer mock.Answer
	done   chan error // result of an upstream call run beside a keep-alive loop

	translated bool // the upstream speaks another dialect
	counting   bool // a count_tokens call forwarded to the provider
	splice     modelSplice
	pass       passBody

	// Stream writers, bound once per pooled exchange so that handing one
	// to fasthttp does not allocate a method value per request.
	relaySameFn       func(streamWriter)
	relayTranslatedFn func(streamWriter)
	relayMockFn       func(streamWriter)
	keepaliveFn       func(streamWriter)

	anthropicTail anthropic.Tail
	chatTail      openai.ChatTail
	responsesTail openai.ResponsesTail
	geminiTail    gemini.Tail
}

var exchangePool sync.Pool

func acquireExchange(s *Server, ctx *fasthttp.RequestCtx, rt *route, key *clientKey, size int64) *exchange {
	x, _ := exchangePool.Get().(*exchange)
	if x == nil {
		x = newExchange()
	}
	x.s, x.ctx, x.rt, x.key, x.size = s, ctx, rt, key, size
	return x
}

func newExchange() *exchange {
	x := &exchange{done: make(chan error, 1)}
	x.pass.x = x
	x.relaySameFn = x.relaySame
	x.relayTranslatedFn = x.relayTranslated
	x.relayMockFn = x.relayMock
	x.keepaliveFn = x.keepaliveWriter
	return x
}

// release ends the request's admission and returns x to the pool. It must
// be called exactly once, after the last use of x and of ctx's request
// body (x.req holds views into it).
func (x *exchange) release() {
	x.s.leave(x.size)
	if x.s.cfg.Log.Access {
		x.logAccess()
	}
	if x.ts != nil {
		translate.ReleaseStream(x.ts)
		x.ts = nil
	}
	if x.upBody != nil {
		pool.Put(x.upBody)
		x.upBody = nil
	}
	if x.reqBody != nil {
		pool.Put(x.reqBody)
		x.reqBody = nil
	}
	x.body = nil
	x.rd.Release()
	x.req.Reset()
	x.answer.Reset()
	x.upReq.Reset()
	x.upResp.Reset()
	x.out, x.spans = trimScratch(x.out), trimScratch(x.spans)
	x.s, x.ctx, x.rt, x.key = nil, nil, nil, nil
	x.model, x.geminiModel, x.upModel = nil, nil, nil
	x.stream, x.translated, x.counting, x.target = false, false, false, provider.Target{}
	x.tok = nil
	x.splice = modelSplice{}
	exchangePool.Put(x)
}

// tail is the same-dialect stream watcher for the client's dialect.
type tail interface {
	Reset()
	Observe(name, data []byte)
	Done() bool
	AppendError(dst []byte, e *codec.Error) []byte
}

var (
	_ tail = (*anthropic.Tail)(nil)
	_ tail = (*openai.ChatTail)(nil)
	_ tail = (*openai.ResponsesTail)(nil)
	_ tail = (*gemini.Tail)(nil)
)

func (x *exchange) tail() tail {
	var t tail
	switch x.rt.dialect {
	case codec.DialectAnthropic:
		t = &x.anthropicTail
	case codec.DialectResponses:
		t = &x.responsesTail
	case codec.DialectGemini:
		t = &x.geminiTail
	default:
		t = &x.chatTail
	}
	t.Reset()
	return t
}

// noCopy makes go vet flag copies of an exchange.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// logAccess writes one access-log line. It names the key and provider,
// never a secret.
func (x *exchange) logAccess() {
	key, prov := "-", "-"
	if x.key != nil {
		key = x.key.name
	}
	if x.target.Provider != nil {
		prov = x.target.Provider.Name
	}
	u := codec.Usage{}
	if x.ts != nil {
		u = x.ts.Usage()
	}
	x.s.log.Printf("%s %s key=%s model=%q provider=%s status=%d stream=%v body=%d in=%d out=%d estimated=%v",
		x.ctx.Method(), x.ctx.Path(), key, x.model, prov, x.ctx.Response.StatusCode(), x.stream, x.size, u.Input, u.Output, u.Estimated)
}

var _ translate.Estimator = (*exchange)(nil)

// encoding returns the tokenizer for the request's model.
func (x *exchange) encoding() *tokenize.Encoding {
	if x.tok == nil {
		x.tok = tokenize.ForModel(pool.B2S(x.model))
	}
	return x.tok
}

// Count counts relayed output text for usage fill-in (translate.Estimator).
// The text is still JSON-escaped; the few escapes it holds barely move
// the estimate.
func (x *exchange) Count(text []byte) int { return x.encoding().Count(text) }

// InputTokens counts the request for usage fill-in (translate.Estimator).
// It runs while an output event is being built in x.out, so it counts with
// its own scratch.
func (x *exchange) InputTokens() int64 {
	return int64(countRequest(x.encoding(), &x.req, &x.spans))
}

// maxScratch is the largest scratch a pooled exchange keeps; one large
// response or text span must not pin its size for the life of the process.
const maxScratch = 1 << 20

func trimScratch(b []byte) []byte {
	if cap(b) > maxScratch {
		return nil
	}
	return b[:0]
}
