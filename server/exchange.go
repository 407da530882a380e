package server

import (
	"sync"

	"github.com/valyala/fasthttp"

	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/tokenize"
)

// exchange is all the state of one request, pooled, in parts with one
// owner each: the client's request (requestPart), the failover plan
// (try), the upstream call (callPart), the relay (relayPart) and the
// outcome (outcomePart). Each part has its own Reset beside its type;
// release finishes the outcome and then resets the parts. Nothing else is
// allocated per request in steady state.
type exchange struct {
	noCopy noCopy

	s   *Server
	gen uint32 // the lease's generation: odd while leased (owner.go)

	requestPart
	try attemptState // the failover plan: credentials and candidates tried (attempt.go)
	callPart
	relayPart
	outcomePart

	tails translate.Tails // the same-dialect stream watchers, one per dialect

	live liveEntry // its record in the live registry (live.go)
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
	return x
}

func newExchange() *exchange {
	x := &exchange{}
	x.pass.x = x
	x.sbody.x = x
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
	x.finish()
	x.liveRemove()
	x.requestPart.Reset()
	x.try.Reset()
	x.callPart.Reset()
	x.relayPart.Reset()
	x.outcomePart.Reset()
	x.s = nil
	exchangePool.Put(x)
}

// finish finishes the outcome: the usage is settled and charged to the
// client key, the upstream body closed, the metrics and the access log
// written, and the admission given back.
func (x *exchange) finish() {
	x.settleUsage()
	x.chargeKey()
	x.closeUpstream(x.upErr)
	x.record() // before the slot is given back: whoever sees it free sees the log line
	if !x.left {
		x.s.leave(x.size + x.held)
	}
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

// tail is the same-dialect stream watcher for the client's dialect, reset
// for this response.
func (x *exchange) tail() translate.Tail {
	return x.tails.For(x.rt.dialect, x.model, x.s.now().Unix())
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
