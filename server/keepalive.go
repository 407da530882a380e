package server

import (
	"net"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/server/upstream"
)

// streamWriter is what a stream relays into (batchwriter.go).
type streamWriter = *batchWriter

// callWithKeepalive runs the upstream call of a streamed request on the
// handler's goroutine, with keep-alive pings armed on the wait for each
// attempt's response head (upstream.Await). If the upstream answers
// within one keep-alive interval (the common case) the response is
// handled as usual, with its real status. Otherwise the first ping commits
// slipstream to a 200 event stream, written on the client's connection
// itself, and a ping follows every interval until the upstream answers;
// from then on an upstream failure can only be reported in-band, and the
// connection closes after the stream. It reports
// whether x was handed off. A WebSocket turn gets no pings (a comment is
// not a frame; the transport pings the socket itself), nor does a request
// without a socket of its own (x.conn nil): the upstream's real status and
// headers answer them.
func (s *Server) callWithKeepalive(x *exchange, translated bool) bool {
	x.translated = translated
	if x.fsink.out != nil || x.conn == nil {
		return x.afterCall(x.attemptsWatched())
	}
	x.pings.due = time.Now().Add(s.keepalive())
	err := x.attemptsWatched()
	if !x.pings.sent {
		x.pings.due = time.Time{}
		return x.afterCall(err)
	}
	x.pings.err = err
	x.dropUpBody() // the call is over: no attempt follows
	x.streamKind = streamKeepalive
	ctx := x.ctx
	x.ctx = nil
	ctx.HijackSetNoResponse(true) // the head went out with the first ping
	ctx.Hijack(x.serveAfterPings)
	return true
}

// pings is the keep-alive state of a streamed call (callWithKeepalive).
type pings struct {
	due  time.Time // when the next ping is due, zero when none is armed
	sent bool      // the 200 head went out, with a ping
	err  error     // the call's result, relayed after the pings
	tick func() time.Time
}

// awaitHead arms the keep-alive pings on the wait for the response head
// of the call on up (what Response.LocalAddr returned), when they are on.
func (x *exchange) awaitHead(up net.Addr) {
	if !x.pings.due.IsZero() {
		if x.pings.tick == nil {
			x.pings.tick = x.ping // bound once per pooled exchange
		}
		upstream.Await(up, x.pings.due, x.pings.tick)
	}
}

// ping sends the client a keep-alive comment while the call waits for a
// response head, on the call's goroutine, and returns when the next is
// due. The first writes the 200 event-stream head, unframed with
// Connection: close as for an HTTP/1.0 client (the stream runs on the raw
// connection: fasthttp's response is past). A client that hung up (a
// failed write) ends the call at once, and no ping follows.
func (x *exchange) ping() time.Time {
	if !x.pings.sent {
		x.commitPings()
	}
	if !flushOut(&x.hsink, pingBytes) {
		x.watch.markGone()
		x.leaveEarly()
		x.pings.due = time.Time{}
		return x.pings.due
	}
	x.pings.due = time.Now().Add(x.s.keepalive())
	return x.pings.due
}

// commitPings writes the head of the 200 event stream the pings belong to.
func (x *exchange) commitPings() {
	ctx := x.ctx
	setSSEHeaders(ctx)
	ctx.Response.Header.SetContentLength(-2) // no framing; Connection: close
	x.status = fasthttp.StatusOK
	x.startGeminiArray(ctx) // a JSON array's content type
	x.head = ctx.Response.Header.AppendBytes(x.head[:0])
	x.bw.Reset(x.conn)
	_, _ = x.bw.Write(x.head) // a batch: sent with the first ping
	x.hsink.reset(x, &x.bw)
	x.pings.sent = true
}

// serveAfterPings relays the call's answer on the connection the pings
// went out on, once fasthttp handed it over, and releases x.
func (x *exchange) serveAfterPings(c net.Conn) {
	defer c.Close()
	// fasthttp cleared the connection's deadlines when it handed it over:
	// the next write must set timeouts.write again, however recently the
	// last ping moved it (extendWrite skips a move within a quarter).
	x.lastWrite = time.Time{}
	x.writeStream(&x.bw)
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
	if status := x.upResp.StatusCode(); status >= 300 && status < 400 {
		x.refuseRedirect(status)
		return false
	}
	if x.translated {
		return x.respondTranslated()
	}
	return x.respondSame()
}

// refuseRedirect answers an upstream redirect with 502. slipstream does
// not follow it (the provider's key would go where the upstream says),
// and must not pass it on: a client that follows it sends its own key
// and its prompt to the host the upstream chose.
func (x *exchange) refuseRedirect(status int) {
	x.result = resultUpstreamFailed
	x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusBadGateway,
		"provider "+x.target.Provider.Name+" answered with a redirect (HTTP "+strconv.Itoa(status)+"), which slipstream does not follow")
}

// afterPings relays the answer of a call whose client got pings while it
// waited: the stream, or the call's failure, in-band.
func (x *exchange) afterPings(out sink) {
	if x.pings.err == errClientGone || x.left {
		x.clientGone()
		return // release closes the upstream
	}
	x.relayAfterPings(out, x.pings.err)
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
