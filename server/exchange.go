package server

import (
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/anthropic"
	"slipstream/codec/gemini"
	"slipstream/codec/openai"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/keys"
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
	modelVal    []byte // the body's model member value, quotes included (a view into the body)
	modelBuf    []byte // the escaped model of a Gemini path, or an unescaped model name
	geminiModel []byte
	stream      bool
	target      provider.Target
	upModel     []byte // upstream model name, escaped

	body    []byte       // the client's request body (x.reqBody's bytes, or fasthttp's)
	tagged  bool         // body holds a string that starts with an origin tag (readTop)
	reqBody *pool.Buffer // the pooled buffer the body was read into

	req    codec.Request
	upReq  fasthttp.Request
	upResp fasthttp.Response
	upBody *pool.Buffer // translated upstream body
	out    []byte       // client output scratch for one event
	urlBuf []byte       // scratch for the upstream URL and User-Agent, copied out by fasthttp
	upRead []byte       // a whole upstream body read (readUpstreamBody); views of it live until release
	spans  []byte       // unescaped text spans while counting tokens
	rd     sse.Reader
	ts     *translate.Stream
	tok    *tokenize.Encoding // the model's encoding, once needed
	answer mock.Answer
	done   chan error // result of an upstream call run beside a keep-alive loop

	// relayBody is a whole answer passBody relays from relayOff on: a
	// same-dialect upstream body read whole and validated
	// (bufferRelayBody), or a translated one (respondTranslatedBody).
	relayBody *pool.Buffer
	relayOff  int
	// held is what hold counted of the answer's buffers in the bytes in
	// flight; x gives it back with its request's size when it leaves.
	held int64

	// errPrefix is "provider NAME: " of the current target, and msgBuf a
	// message built with it (named.go).
	errPrefix, msgBuf []byte

	try        attemptState // credentials and candidates tried (attempt.go)
	decoded    bool         // x.req holds the client's request
	translated bool         // the upstream speaks another dialect
	counting   bool         // a count_tokens call forwarded to the provider
	splice     modelSplice
	pass       passBody

	// What the access log needs, copied out of the RequestCtx before the
	// handler returns (fasthttp recycles the ctx while a stream may still
	// run): the status sent, and how the response ended.
	status int
	result result
	upErr  error // why the upstream body was not read to its end, or nil

	// The client key's reservation (keylimits.go): the request's input
	// counted for it (or 0), and the tokens held until release settles
	// them.
	inTokens int64
	reserved keys.Reservation

	// Usage and timings for the access log and metrics (usage.go,
	// access.go).
	usage    codec.Usage
	sameTail tail  // the tail relaySame watched with, or nil
	estOut   int64 // output tokens counted locally while no usage was known
	bodyTail bodyTail
	id       requestID
	start    time.Time // the handler's start
	ttft     time.Time // when the first event went to the client, or zero
	bytesOut int64     // body bytes written to the client by streams
	callErr  error     // the failed upstream call's error, or nil

	// stream is what writeStream runs once x is handed to fasthttp as a
	// body stream writer.
	streamKind    streamKind
	geminiArray   geminiArray        // the JSON-array framing of a Gemini stream without alt=sse
	writeStreamFn func(streamWriter) // x.writeStream, bound once per pooled exchange
	hsink         httpSink           // the sink of the HTTP body stream (writeStream)
	gen           uint32             // the lease's generation: odd while leased (owner.go)
	left          bool               // the admission slot was given back early

	head      []byte          // the response head, for an HTTP/1.0 client (http10)
	conn      net.Conn        // the client's socket (clientConn), or nil
	goneCh    <-chan struct{} // closed when a synthetic ctx's client left (goneChan), or nil
	lastWrite time.Time       // when the last write deadline was set
	watch     watcher

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
	x.lease()
	x.conn = clientConn(ctx)
	if x.conn == nil {
		x.goneCh = goneChan(ctx)
	}
	return x
}

func newExchange() *exchange {
	x := &exchange{done: make(chan error, 1)}
	x.pass.x = x
	x.writeStreamFn = x.writeStream
	return x
}

// release closes the upstream body, ends the request's admission, writes
// the access log and returns x to the pool. Exactly one owner calls it,
// once, with the generation it captured when it took x (owner.go): the
// handler, unless it handed x to a body stream (see handOff), whose end
// then releases it. It runs after the last use of x and of the request
// body (x.req holds views into it). A stale generation (a second release,
// or one after x was leased again) panics before anything is touched.
func (x *exchange) release(gen uint32) {
	x.endLease(gen)
	x.settleUsage()
	x.chargeKey()
	x.closeUpstream(x.upErr)
	x.record() // before the slot is given back: whoever sees it free sees the log line
	if !x.left {
		x.s.leave(x.size + x.held)
	}
	x.held = 0
	if x.ts != nil {
		translate.ReleaseStream(x.ts)
		x.ts = nil
	}
	if x.upBody != nil {
		pool.Put(x.upBody)
		x.upBody = nil
	}
	pool.Put(x.relayBody)
	x.relayBody, x.relayOff = nil, 0
	if x.reqBody != nil {
		pool.Put(x.reqBody)
		x.reqBody = nil
	}
	x.body, x.tagged = nil, false
	x.rd.Release()
	x.req.Reset()
	x.answer.Reset()
	x.upReq.Reset()
	x.upResp.Reset()
	x.out, x.spans = trimScratch(x.out), trimScratch(x.spans)
	x.urlBuf, x.upRead = trimScratch(x.urlBuf), trimScratch(x.upRead)
	x.geminiArray.reset()
	x.hsink = httpSink{}
	x.s, x.ctx, x.rt, x.key = nil, nil, nil, nil
	x.model, x.modelVal, x.geminiModel, x.upModel = nil, nil, nil, nil
	x.stream, x.translated, x.counting, x.target = false, false, false, provider.Target{}
	x.status, x.result, x.upErr, x.streamKind = 0, resultOK, nil, streamNone
	x.conn, x.goneCh, x.left, x.lastWrite = nil, nil, false, time.Time{}
	x.head = trimScratch(x.head)
	x.tok = nil
	x.usage, x.sameTail, x.estOut, x.ttft, x.bytesOut = codec.Usage{}, nil, 0, time.Time{}, 0
	x.inTokens = 0
	x.callErr = nil
	x.bodyTail.reset(-1)
	x.splice = modelSplice{}
	x.try.reset()
	x.decoded = false
	exchangePool.Put(x)
}

// leaveEarly gives the admission slot back before x is released: the
// client is gone, and x only waits for an upstream call that cannot be
// cut short. Only x's owner calls it.
func (x *exchange) leaveEarly() {
	if !x.left {
		x.left = true
		x.s.leave(x.size + x.held)
	}
}

// tail is the same-dialect stream watcher for the client's dialect.
type tail interface {
	Reset()
	Observe(name, data []byte)
	Done() bool
	Usage() codec.Usage
	Text() []byte
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
	if t == &x.responsesTail {
		x.responsesTail.Begin(x.model, x.s.now().Unix())
	}
	return t
}

// noCopy makes go vet flag copies of an exchange.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

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

// InputTokens counts the request for usage fill-in (translate.Estimator),
// or returns the count its key's reservation made. It runs while an
// output event is being built in x.out, so it counts with its own scratch.
func (x *exchange) InputTokens() int64 {
	if x.inTokens > 0 {
		return x.inTokens
	}
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
