package server

import (
	"errors"
	"io"
	"net"
	"runtime/debug"

	"slipstream/codec"
	"slipstream/pool"

	"github.com/valyala/fasthttp"
)

// An exchange has one owner at a time. The handler owns it first and
// releases it when it returns, unless it handed it to fasthttp as a body
// stream: then the stream's end releases it (streamBody.Close or
// passBody.Close, which fasthttp calls once; writeStream's defer on an
// HTTP/1.0 connection), exactly once. Nothing else calls release.

// streamKind is what writeStream runs.
type streamKind uint8

const (
	streamNone       streamKind = iota
	streamSame                  // relaySame
	streamTranslated            // relayTranslated
	streamMock                  // relayMock
	streamKeepalive             // afterPings
)

// result is how a response ended, for the access log.
type result uint8

const (
	resultOK              result = iota
	resultClientGone             // the client left (write error, or seen hanging up)
	resultUpstreamFailed         // the upstream stream or body ended early or failed
	resultWriteTimeout           // the client stopped reading for timeouts.write
	resultPanic                  // a bug; recovered
	resultUpstreamTimeout        // the upstream did not answer in time
)

func (r result) String() string {
	switch r {
	case resultClientGone:
		return "client_gone"
	case resultUpstreamFailed:
		return "upstream_failed"
	case resultWriteTimeout:
		return "write_timeout"
	case resultPanic:
		return "panic"
	case resultUpstreamTimeout:
		return "upstream_timeout"
	}
	return "ok"
}

// statusClientClosed is what the access log records for a request whose
// client left before its answer (nginx's 499); the client sees nothing.
const statusClientClosed = 499

// errClientGone ends an upstream body the client no longer waits for.
var errClientGone = errors.New("the client went away")

// errPanic ends an upstream body whose relay panicked.
var errPanic = errors.New("BUG: the relay panicked")

// handOffStream hands x to fasthttp as the body stream (x.sbody) that runs
// kind: from here on the stream owns x and the handler must not touch x or
// release it. The status already set on ctx is what the log records. On a
// WebSocket turn nothing is handed to fasthttp: serveRequest returns x,
// and the transport's Run is the stream that owns it.
func (x *exchange) handOffStream(kind streamKind) {
	ctx := x.ctx
	x.status = ctx.Response.StatusCode()
	x.streamKind = kind
	if kind == streamSame || kind == streamTranslated {
		x.dropUpBody() // the upstream answered: no attempt follows
	}
	x.startGeminiArray(ctx)
	x.ctx = nil // the stream runs after the handler returned: no ctx there
	if x.fsink.out != nil {
		return // a WebSocket turn: the transport runs the stream (Run)
	}
	if x.http10(ctx) {
		return
	}
	ctx.Response.SetBodyStream(&x.sbody, -1)
}

// handOffBody hands x to fasthttp as the response body stream (x.pass),
// whose Close releases x; size is the upstream's Content-Length or -1.
func (x *exchange) handOffBody(size int) {
	ctx := x.ctx
	x.status = ctx.Response.StatusCode()
	x.ctx = nil
	x.bodyTail.reset(int64(size))
	x.watch.start(x) // the body may drip: a departed client ends it (passBody.Close stops this)
	if size < 0 && x.http10(ctx) {
		return
	}
	ctx.Response.SetBodyStream(&x.pass, size)
}

// http10 serves a body of unknown length to an HTTP/1.0 client, which
// cannot read chunked encoding (and fasthttp chunks every body stream of
// unknown length): x takes the connection over once the handler returns,
// writes the head without framing and the body until its end, and the
// connection's close ends it. It reports false, doing nothing, for
// HTTP/1.1 and for a ctx that is not a socket's.
func (x *exchange) http10(ctx *fasthttp.RequestCtx) bool {
	if ctx.Request.Header.IsHTTP11() || x.conn == nil {
		return false
	}
	ctx.Response.Header.SetContentLength(-2) // no framing; Connection: close
	x.head = ctx.Response.Header.AppendBytes(x.head[:0])
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(x.serveHijacked)
	return true
}

// serveHijacked writes the response of http10 on the client's connection.
// It owns x, like writeStream or passBody.
func (x *exchange) serveHijacked(c net.Conn) {
	defer c.Close()
	bw := &x.bw
	bw.Reset(c)
	_, _ = bw.Write(x.head) // a batch: sent by the first flush
	if x.streamKind != streamNone {
		x.writeStream(bw)
		return
	}
	defer x.pass.Close()
	if bw.Flush() != nil {
		x.writeFailed()
		return
	}
	if _, err := io.Copy(c, &x.pass); err != nil {
		x.writeFailed()
	}
}

// writeStream runs x's stream into w and releases x at its end, however
// it ends: for the owners that hold x only for the stream (an HTTP/1.0
// client's connection, a stream fasthttp never wrote).
func (x *exchange) writeStream(w streamWriter) {
	defer x.releaseOnce(x.owner())
	x.streamTo(w)
}

// streamTo runs x's stream into w and leaves in w nothing unsent. A panic
// in the relay ends only this stream, with the dialect's error event.
func (x *exchange) streamTo(w streamWriter) {
	defer x.endStream(w)
	x.hsink.reset(x, w)
	x.runStream(&x.hsink)
}

// runStream runs the relay x's stream kind names, writing to out.
func (x *exchange) runStream(out sink) {
	out = x.guardRelay(out)
	if x.gsink != nil && out == sink(x.gsink) {
		defer x.gsink.end()
	}
	switch x.streamKind {
	case streamSame:
		x.relaySame(out)
	case streamTranslated:
		x.relayTranslated(out)
	case streamMock:
		x.relayMock(out)
	case streamKeepalive:
		x.afterPings(out)
	}
}

func (x *exchange) endStream(w streamWriter) {
	if p := recover(); p != nil {
		x.recovered("stream writer", p)
		x.hsink.reset(x, w)
		x.writePanicEvent(&x.hsink)
	}
	if w.Buffered() > 0 {
		x.flush(w) // what a relay left buffered (relayOut) leaves now
	}
	x.geminiArray.close(w)
}

// recovered logs a panic in a goroutine that serves one request and marks
// the exchange failed. The log names where it happened and the stack; no
// request content reaches it.
func (x *exchange) recovered(where string, p any) {
	x.result = resultPanic
	if x.upErr == nil {
		x.upErr = errPanic
	}
	x.s.recovered(where, p)
}

// recovered counts and logs a panic recovered in where: each is a bug.
// Called from the deferred function, debug.Stack still shows the panic.
func (s *Server) recovered(where string, p any) {
	s.panics.Add(1)
	s.log.Printf("BUG: panic in %s recovered: %v\n%s", where, p, debug.Stack())
}

// writePanicEvent ends a stream whose relay panicked with the dialect's
// in-band error. Its own panic (the state may be broken) is swallowed: the
// stream then just ends.
func (x *exchange) writePanicEvent(out sink) {
	defer func() { _ = recover() }()
	e := codec.Error{Status: fasthttp.StatusInternalServerError, Kind: codec.ErrAPI, Message: msgInternal}
	x.writeInBandError(out, &e)
}

var msgInternal = []byte("internal error in slipstream; the stream was ended")

// clientGone records that the client left while x was writing to it.
func (x *exchange) clientGone() {
	x.try.abandoned.Store(true) // no further failover attempts
	if x.result == resultOK {
		x.result = resultClientGone
	}
	if x.upErr == nil {
		x.upErr = errClientGone
	}
}

// writeOut writes b to the client's buffered writer (which writes through
// when full). On failure the client is gone: x records it. The write
// deadline moves before a write that reaches the socket (here when b does
// not fit, or in flush), not per event.
func (x *exchange) writeOut(w streamWriter, b []byte) bool {
	x.firstToken(b)
	if x.geminiArray.on {
		if b = x.geminiArray.frame(b); len(b) == 0 {
			return true
		}
	}
	if len(b) > w.Available() {
		x.extendWrite()
	}
	x.bytesOut += int64(len(b))
	if _, err := w.Write(b); err != nil {
		x.writeFailed()
		return false
	}
	return true
}

// flush sends what writeOut buffered.
func (x *exchange) flush(w streamWriter) bool {
	x.extendWrite()
	if err := w.Flush(); err != nil {
		x.writeFailed()
		return false
	}
	return true
}

// writeInBandError ends a committed stream with e in the client's dialect.
func (x *exchange) writeInBandError(out sink, e *codec.Error) {
	buf := pool.Get(len(e.Message) + 256)
	if x.translated && x.ts != nil {
		buf.B = x.ts.AppendError(buf.B[:0], e)
	} else {
		buf.B = x.tail().AppendError(buf.B[:0], e)
	}
	flushOut(out, buf.B)
	pool.Put(buf)
}
