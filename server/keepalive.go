package server

import (
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
)

// streamWriter is what a stream relays into (batchwriter.go).
type streamWriter = *batchWriter

// callWithKeepalive runs the upstream call of a streamed request beside a
// timer. If the upstream answers within one keep-alive interval (the
// common case) the response is handled as usual, with its real status.
// Otherwise slipstream commits to a 200 SSE response and sends ": ping"
// comments every interval until the upstream answers; from then on an
// upstream failure can only be reported in-band. It reports whether x was
// handed off. A WebSocket turn gets no pings (a comment is not a frame;
// the transport pings the socket itself): its call runs on the turn's
// goroutine, and the upstream's real status and headers answer it.
func (s *Server) callWithKeepalive(x *exchange, translated bool) bool {
	x.translated = translated
	if x.fsink.out != nil {
		return x.afterCall(x.attemptsWatched())
	}
	go x.callAsync(x.owner())
	timer := time.NewTimer(s.keepalive())
	select {
	case err := <-x.done:
		timer.Stop()
		return x.afterCall(err)
	case <-timer.C:
	}
	setSSEHeaders(x.ctx)
	x.handOffStream(streamKeepalive)
	return true
}

// callAsync runs the upstream call in its own goroutine and reports its
// result on x.done, for the lease gen it was started in: a result for a
// lease that ended meanwhile is refused (x.stillOwns). A panic in the call
// ends this request only.
func (x *exchange) callAsync(gen uint32) {
	defer func() {
		if p := recover(); p != nil {
			x.recovered("upstream call", p)
			x.done <- errPanic
		}
	}()
	err := x.attemptsWatched()
	if x.stillOwns(gen, "keep-alive call") {
		x.done <- err
	}
}

// attemptsWatched runs the upstream attempts while the watcher looks out
// for the client leaving; when it left, the call was interrupted (or its
// answer is dropped) and the result is errClientGone.
func (x *exchange) attemptsWatched() error {
	x.watch.startCall(x)
	err := x.attempts()
	if x.watch.stopCall() {
		return errClientGone
	}
	return err
}

// afterCall answers from a finished upstream call, before any byte was sent
// to the client. It reports whether x was handed off.
func (x *exchange) afterCall(err error) bool {
	if err == errClientGone {
		x.clientGone()
		x.ctx.SetConnectionClose()
		x.ctx.SetStatusCode(statusClientClosed)
		return false
	}
	if err != nil {
		status, msg := x.callError(err)
		if status == fasthttp.StatusGatewayTimeout {
			x.result = resultUpstreamTimeout
		} else {
			x.result = resultUpstreamFailed
		}
		x.s.writeError(x.ctx, x.rt.dialect, status, msg)
		return false
	}
	if x.translated {
		return x.respondTranslated()
	}
	return x.respondSame()
}

// keepaliveWriter pings the client until the upstream answers, then relays.
// A client that hangs up meanwhile (a failed ping, or its socket seen
// closed by the watcher) ends the upstream call at once.
func (x *exchange) keepaliveWriter(out sink) {
	tick := time.NewTicker(x.s.keepalive())
	defer tick.Stop()
	for {
		select {
		case err := <-x.done:
			if err == errClientGone || x.left {
				x.clientGone()
				return // release closes the upstream
			}
			x.relayAfterPings(out, err)
			return
		case <-tick.C:
			if x.left {
				continue
			}
			if !flushOut(out, pingBytes) {
				x.watch.markGone()
				x.leaveEarly()
			}
		}
	}
}

var (
	pingBytes    = []byte(sse.Ping)
	msgNotStream = []byte("the upstream answered a streamed request with a body that is not an event stream")
)

// relayAfterPings continues a stream whose 200 already went out.
func (x *exchange) relayAfterPings(out sink, err error) {
	if err == nil && x.upResp.StatusCode() == fasthttp.StatusOK {
		switch {
		case x.isEventStream() && x.translated:
			x.relayTranslated(out)
		case x.isEventStream():
			x.relaySame(out)
		case x.translated && x.isJSON():
			x.relayTranslatedBody(out)
		default:
			x.result = resultUpstreamFailed
			e := codec.Error{Status: fasthttp.StatusBadGateway, Kind: codec.ErrAPI, Message: x.named(msgNotStream)}
			x.writeInBandError(out, &e)
		}
		return
	}
	var e codec.Error
	var body []byte
	x.result = resultUpstreamFailed
	if err != nil {
		status, msg := x.callError(err)
		e = codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: []byte(msg)}
	} else {
		body, _ = x.readUpstreamBody(1 << 20)
		e = translate.DecodeError(x.target.Provider.Dialect, body, x.upResp.StatusCode())
		x.rewordCredentialError(&e)
		x.nameUpstreamError(&e)
	}
	x.writeInBandError(out, &e)
}
