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
	if err := x.readFull(r, b); err != nil {
		return err
	}
	x.body = b
	dropPrefetch(ctx)
	return nil
}

// Large bodies are read with a low-water mark on the socket (lowWater):
// the reader sleeps until a good part of what is left has arrived.
const (
	// lowatMin is the least a mark is set to: below it, the waits a mark
	// saves do not pay for the system calls that set it.
	lowatMin = 128 << 10
	// lowatSlack is a margin kept below what is still to arrive. A mark
	// above it would hold the reader until a timeout: the socket would
	// never hold that much. fasthttp reads the socket only once its read
	// buffer is empty, so at every wait what is still to arrive is exactly
	// the body not yet returned; the margin is for a reader that buffers
	// ahead of what it returns (it is more than ReadBufferSize).
	lowatSlack = 16 << 10
)

// readFull fills b from the body stream r, as io.ReadFull does. While
// more than lowatMin is still to come, the socket's mark is kept at no
// more than what must still arrive, and at least half of it. Each read
// of r reads the socket at most once, and waits only when the socket
// held nothing, so setting the mark before every read keeps it safe.
func (x *exchange) readFull(r io.Reader, b []byte) error {
	if len(b) < 2*lowatMin {
		_, err := io.ReadFull(r, b)
		return err
	}
	w := newLowWater(x.conn)
	defer w.set(1)
	for got := 0; got < len(b); {
		w.mark(len(b) - got - lowatSlack)
		n, err := r.Read(b[got:])
		got += n
		if err != nil && got < len(b) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// mark keeps the socket's mark at most ahead bytes (the least that is
// still to arrive) and, while ahead is over lowatMin, at least half of it.
// Lowering goes to three quarters of ahead, so that the next few reads
// need no call.
func (w *lowWater) mark(ahead int) {
	switch {
	case ahead < lowatMin:
		w.set(1)
	case w.cur > ahead || 2*w.cur < ahead:
		w.set(ahead - ahead/4)
	}
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
