package server

import (
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/keys"
	"slipstream/server/price"
)

// Reservations. A key with a tpm or a budget reserves, when a generation
// request is admitted, the request's counted input tokens plus the most it
// may generate: its max_tokens (Chat max_completion_tokens or max_tokens,
// Responses max_output_tokens, Gemini generationConfig.maxOutputTokens),
// times Chat's n, or defaultReserveOutput when it sets none. The
// reservation is settled to the real usage when the request ends, however
// it ends (keyUsage). Keys without tpm or budget count nothing.

// defaultReserveOutput is the output a request without max_tokens
// reserves. Without it the upstream's ceiling is the model's own (up to
// 128k tokens), which slipstream does not know; 4096 is the limit most
// clients send and above what most answers use, and the reservation only
// decides how many requests may run at once near a limit: each is
// settled to what it really used.
const defaultReserveOutput = 4096

// maxReserveOutput bounds the output one request reserves, whatever its
// max_tokens says.
const maxReserveOutput = 1 << 32

// admitKey checks the client key's rate limits and budgets for a
// generation request and reserves its tokens, and for a key with
// budget_usd their price at the model's rates (cost.go); token counts go
// through admitCount instead. A refusal is answered 429 with Retry-After
// in the client's dialect; a budget_usd key asking for a model without a
// price, 403.
func (x *exchange) admitKey() bool {
	now := x.s.now()
	var p *price.Price
	if x.key.HasBudgetUSD() {
		var ok bool
		if p, ok = x.admissionPrice(); !ok {
			return false
		}
	}
	r, wait := x.s.keys.Admit(x.key, now)
	if r == keys.Allowed && x.key.Charged() {
		n := x.reservation()
		x.reserved, r, wait = x.s.keys.Reserve(x.key, now, n, x.reserveNanos(p, n))
	}
	return x.keyAllowed(r, wait)
}

// admitCount checks a token count request against the key's rpm (unless
// the key is count_tokens_exempt); it reserves nothing.
func (x *exchange) admitCount() bool {
	r, wait := x.s.keys.AdmitCount(x.key, x.s.now())
	return x.keyAllowed(r, wait)
}

// keyAllowed reports whether r lets the request go on; otherwise it
// answers r: 429 with Retry-After.
func (x *exchange) keyAllowed(r keys.Refusal, wait time.Duration) bool {
	if r == keys.Allowed {
		return true
	}
	setRetryAfter(x.ctx, int64(wait))
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusTooManyRequests, r.String())
	return false
}

// reservation is the tokens a request reserves: its counted input plus
// its output ceiling. It decodes the request once (x.req, kept for a
// translated attempt) and keeps the input count (x.inTokens).
func (x *exchange) reservation() int64 {
	if !x.decoded {
		if err := translate.DecodeRequest(x.rt.dialect, &x.req, x.body); err != nil {
			// The upstream or the translation will refuse it; until
			// then, about four bytes a token.
			x.req.Reset()
			x.inTokens = int64(len(x.body)) / 4
			return x.inTokens + defaultReserveOutput
		}
		x.req.Stream = x.stream
		x.req.Created = x.s.now().Unix()
		x.decoded = true
	}
	x.inTokens = x.InputTokens()
	out := x.req.MaxTokens
	if out <= 0 {
		out = defaultReserveOutput
	}
	out = min(out, maxReserveOutput)
	if n := x.req.N; n > 1 { // n answers to one prompt
		out = min(out, maxReserveOutput/n) * n
	}
	return x.inTokens + out
}

// chargeKey settles the key's reservation to the request's usage and
// cost, once, when x is released.
func (x *exchange) chargeKey() {
	if !x.key.Charged() {
		return
	}
	u := x.keyUsage()
	x.s.keys.Settle(x.key, x.reserved, u.Input+u.Output, x.costNanos(), x.s.now())
	x.reserved = keys.Reservation{}
}

// keyUsage is the usage a key is charged: the upstream's counts (or the
// local estimate of a success that reported none, settleUsage); for an
// answer cut short before its usage came (the upstream or the client
// left), what it consumed as far as slipstream can tell: the input counted
// at admission and the output text relayed.
func (x *exchange) keyUsage() codec.Usage {
	if x.usage.Known || !x.try.answered || x.rt.op != opGenerate {
		return x.usage
	}
	in := x.inTokens
	if in == 0 && x.decoded {
		in = x.InputTokens()
		x.inTokens = in // counted once: the cost and the charge read it again
	}
	return codec.Usage{Input: in, Output: x.estOut, Known: true, Estimated: true}
}

// setRetryAfter sets Retry-After to wait (ns) rounded up to whole
// seconds, at least 1.
func setRetryAfter(ctx *fasthttp.RequestCtx, wait int64) {
	secs := (wait + int64(time.Second) - 1) / int64(time.Second)
	if secs < 1 {
		secs = 1
	}
	buf := pool.Get(16)
	buf.B = fasthttp.AppendUint(buf.B[:0], int(secs))
	ctx.Response.Header.SetBytesV("Retry-After", buf.B)
	pool.Put(buf)
}
