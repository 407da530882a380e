package server

import (
	"errors"
	"io"
	"math"

	"github.com/valyala/fasthttp"

	"slipstream/pool"
)

// errBodyTooLarge reports a body over limits.max_body_bytes that declared
// no length up front.
var errBodyTooLarge = errors.New("request body exceeds limits.max_body_bytes")

// declaredSize is the body size the request announces: its Content-Length,
// or, for a chunked body, the limit (admission must assume the worst).
func (s *Server) declaredSize(ctx *fasthttp.RequestCtx) int64 {
	if n := ctx.Request.Header.ContentLength(); n >= 0 {
		return int64(n)
	}
	return s.cfg.Limits.MaxBodyBytes.N()
}

// readBody reads the request body into a pooled buffer of exactly its
// size (fasthttp's own reader rounds its buffer up to a power of two,
// which costs up to 2x the bytes in flight under load). The server streams
// request bodies, so nothing was read before admission. The buffer is
// x.reqBody, released with x.
func (x *exchange) readBody() error {
	ctx := x.ctx
	r := ctx.RequestBodyStream()
	if r == nil { // a body fasthttp already holds (tests that call the handler directly)
		x.body = ctx.Request.Body()
		return nil
	}
	max := x.s.cfg.Limits.MaxBodyBytes.N()
	n := ctx.Request.Header.ContentLength()
	if n < 0 {
		return x.readChunked(ctx, r, max)
	}
	if int64(n) > max {
		return errBodyTooLarge
	}
	x.reqBody = pool.Get(n)
	b := x.reqBody.B[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	x.body = b
	dropPrefetch(ctx)
	return nil
}

// dropPrefetch lets fasthttp's own copy of the body's first bytes go once
// the body is read: fasthttp reads up to 8 KiB of it into a buffer of its
// pool before the handler runs, which the request would otherwise hold
// until it ends, through the whole of a stream. ResetBody hands that
// buffer to the finished body stream, which fasthttp pools as soon as the
// handler returns.
func dropPrefetch(ctx *fasthttp.RequestCtx) { ctx.Request.ResetBody() }

// readChunked reads a body of unknown length, up to max bytes.
func (x *exchange) readChunked(ctx *fasthttp.RequestCtx, r io.Reader, max int64) error {
	x.reqBody = pool.Get(64 << 10)
	if _, err := pool.ReadCapped(x.reqBody, r, int(min(max, math.MaxInt))); err == pool.ErrOverCap {
		return errBodyTooLarge
	} else if err != nil {
		return err
	}
	x.body = x.reqBody.B
	dropPrefetch(ctx)
	return nil
}
