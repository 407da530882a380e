package server

import (
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/keys"
)

// admitKey checks the client key's rate limits and budget for a
// generation request (count_tokens is not limited: it spends no provider
// tokens). A refusal is answered 429 with Retry-After in the client's
// dialect.
func (x *exchange) admitKey() bool {
	r, wait := x.s.keys.Admit(x.key, x.s.now())
	if r == keys.Allowed {
		return true
	}
	setRetryAfter(x.ctx, int64(wait))
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusTooManyRequests, r.String())
	return false
}

// chargeKey charges the response's real usage to the client key's tpm
// bucket and budget, once, when x is released.
func (x *exchange) chargeKey() {
	if !x.key.Charged() {
		return
	}
	u := x.keyUsage()
	x.s.keys.Charge(x.key, u.Input+u.Output, x.s.now())
}

// keyUsage is the usage a key is charged: the upstream's counts, or the
// local estimate when it sent none.
func (x *exchange) keyUsage() codec.Usage { return x.usage }

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
