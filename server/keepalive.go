package server

import (
	"bufio"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/pool"
)

// streamWriter is what fasthttp hands a body stream writer.
type streamWriter = *bufio.Writer

// callWithKeepalive runs the upstream call of a streamed request beside a
// timer. If the upstream answers within one keep-alive interval (the
// common case) the response is handled as usual, with its real status.
// Otherwise slipstream commits to a 200 SSE response and sends ": ping"
// comments every interval until the upstream answers; from then on an
// upstream failure can only be reported in-band.
func (s *Server) callWithKeepalive(x *exchange, translated bool) {
	x.translated = translated
	go x.callAsync()
	timer := time.NewTimer(s.keepalive())
	select {
	case err := <-x.done:
		timer.Stop()
		x.afterCall(err)
		return
	case <-timer.C:
	}
	setSSEHeaders(x.ctx)
	x.ctx.SetBodyStreamWriter(x.keepaliveFn)
}

func (x *exchange) callAsync() { x.done <- x.call() }

// afterCall answers from a finished upstream call, before any byte was sent
// to the client.
func (x *exchange) afterCall(err error) {
	if err != nil {
		status, msg := x.callError(err)
		x.s.writeError(x.ctx, x.rt.dialect, status, msg)
		x.release()
		return
	}
	if x.translated {
		x.respondTranslated()
		return
	}
	x.respondSame()
}

// keepaliveWriter pings the client until the upstream answers, then relays.
func (x *exchange) keepaliveWriter(w streamWriter) {
	tick := time.NewTicker(x.s.keepalive())
	defer tick.Stop()
	for {
		select {
		case err := <-x.done:
			x.relayAfterPings(w, err)
			return
		case <-tick.C:
			if _, err := w.WriteString(sse.Ping); err == nil {
				err = w.Flush()
			}
			// A failed write means the client left; the upstream call
			// still has to finish (first_byte bounds it) before the
			// connection can be closed and x released.
		}
	}
}

// relayAfterPings continues a stream whose 200 already went out.
func (x *exchange) relayAfterPings(w streamWriter, err error) {
	if err == nil && x.upResp.StatusCode() == fasthttp.StatusOK {
		if x.translated {
			x.relayTranslated(w)
		} else {
			x.relaySame(w)
		}
		return
	}
	var e codec.Error
	var body []byte
	if err != nil {
		status, msg := x.callError(err)
		e = codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: []byte(msg)}
	} else {
		body, _ = x.readUpstreamBody(1 << 20)
		e = translate.DecodeError(x.target.Provider.Dialect, body, x.upResp.StatusCode())
	}
	x.writeInBandError(w, &e)
	x.closeUpstream(nil)
	x.release()
}

// writeInBandError ends a committed stream with e in the client's dialect.
func (x *exchange) writeInBandError(w streamWriter, e *codec.Error) {
	buf := pool.Get(len(e.Message) + 256)
	if x.translated && x.ts != nil {
		buf.B = x.ts.AppendError(buf.B[:0], e)
	} else {
		buf.B = x.tail().AppendError(buf.B[:0], e)
	}
	_, _ = w.Write(buf.B)
	_ = w.Flush()
	pool.Put(buf)
}
