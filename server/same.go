package server

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/upstream"
)

// forwardSame relays a request to a provider of the client's own dialect:
// the body goes up byte for byte (the model value spliced when an alias
// renames it, without copying the body), and the response comes back byte
// for byte, streamed as it arrives. It reports whether x was handed off.
func (s *Server) forwardSame(x *exchange) bool {
	x.buildUpstream(true)
	body := x.body
	if x.target.Aliased && x.rt.dialect != codec.DialectGemini {
		x.setUpSplice()
	} else {
		x.setUpBody(body)
	}
	if x.stream && s.keepalive() > 0 {
		return s.callWithKeepalive(x, false)
	}
	return x.afterCall(x.attemptsWatched())
}

// respondSame answers the client from the upstream response headers:
// SSE is pumped event by event (each event checked before it is relayed);
// anything else (a JSON body, an error with its status) is read whole,
// checked, and relayed byte for byte, or answered as a 502 in the
// client's dialect when it is not whole JSON. It reports whether x was
// handed off.
func (x *exchange) respondSame() bool {
	ctx := x.ctx
	if x.credentialRejected() {
		x.writeCredentialRejected()
		return false
	}
	status := x.upResp.StatusCode()
	sse := status == fasthttp.StatusOK && x.isEventStream()
	if !sse && !x.isJSON() && (status >= 400 || x.isHTML()) {
		x.respondNotJSON(status)
		return false
	}
	if !sse && !x.bufferRelayBody() {
		return false // answered
	}
	ctx.SetStatusCode(status)
	upstream.CopyResponseHeaders(&ctx.Response.Header, &x.upResp.Header)
	if sse {
		setSSEHeaders(ctx)
		x.handOffStream(streamSame)
		return true
	}
	x.handOffBody(len(x.relayBody.B))
	return true
}

// respondNotJSON answers an upstream reply a JSON client cannot read (an
// HTML page from a proxy in front of the provider, an error in plain text;
// a success labelled text/plain is passed on, as some compatible servers
// label JSON so) with
// the client dialect's error shape, keeping the upstream's error status
// (502 for anything else). The body is not relayed: it is closed unread.
func (x *exchange) respondNotJSON(status int) {
	x.result = resultUpstreamFailed
	x.upErr = errNotJSON
	if status < 400 {
		status = fasthttp.StatusBadGateway
	}
	copyRetryAfter(x.ctx, &x.upResp)
	x.s.writeError(x.ctx, x.rt.dialect, status, "upstream "+x.target.Provider.Name+" answered "+strconv.Itoa(x.upResp.StatusCode())+" with a body that is not JSON")
}

var errNotJSON = errors.New("the upstream body is not JSON")

// isHTML reports whether the upstream labelled its body HTML.
func (x *exchange) isHTML() bool {
	ct := x.upResp.Header.ContentType()
	return len(ct) >= 9 && bytes.EqualFold(ct[:9], []byte("text/html"))
}

// isJSON reports whether the upstream labelled its body JSON
// (application/json, or a +json type).
func (x *exchange) isJSON() bool {
	ct := x.upResp.Header.ContentType()
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	return bytes.EqualFold(ct, []byte("application/json")) || len(ct) > 5 && bytes.EqualFold(ct[len(ct)-5:], []byte("+json"))
}

// relaySame is the stream writer of the same-dialect path: the pump with
// the verbatim step, watched by the client dialect's tail.
func (x *exchange) relaySame(out sink) {
	x.sameTail = x.tail()
	x.pump(out, passStep{})
}

// streamFailure describes an upstream stream that stopped before its
// terminal event.
func (x *exchange) streamFailure(readErr error) codec.Error {
	if x.cancelled() {
		status, msg := x.cancelledCall()
		return codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: []byte(msg)}
	}
	e := codec.Error{Status: fasthttp.StatusBadGateway, Kind: codec.ErrAPI, Message: msgTruncated}
	if readErr == errMalformedEvent {
		e.Message = msgMalformed
	} else if readErr != nil {
		e.Message = msgReadFailed
		if status, _ := x.callError(readErr); status == fasthttp.StatusGatewayTimeout {
			e.Status, e.Kind, e.Message = status, codec.ErrTimeout, msgIdle
		}
	}
	e.Message = x.named(e.Message)
	return e
}

var (
	msgTruncated  = []byte("upstream stream ended before its terminal event")
	msgReadFailed = []byte("reading the upstream stream failed")
	msgIdle       = []byte("upstream stream was silent longer than timeouts.idle")
)

func setSSEHeaders(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	ctx.Response.Header.Del("Content-Length")
}

// passBody relays a non-SSE upstream body to the client through fasthttp's
// body stream; fasthttp closes it after the last byte, or when the client
// is gone, which releases the exchange: passBody owns x once handed off.
type passBody struct{ x *exchange }

func (p *passBody) Read(b []byte) (n int, err error) {
	x := p.x
	defer func() {
		if r := recover(); r != nil {
			x.recovered("body relay", r)
			n, err = 0, errPanic
		}
	}()
	x.extendWrite() // fasthttp writes what this returns to the client next
	if x.relayBody != nil {
		return x.readRelayed(b)
	}
	r := x.upStream()
	if r == nil {
		return 0, io.EOF
	}
	n, err = r.Read(b)
	x.bodyTail.write(b[:n])
	x.bytesOut += int64(n)
	if err == io.EOF {
		x.bodyTail.done = true
	} else if err != nil {
		x.upErr = err
		x.result = resultUpstreamFailed
	}
	return n, err
}

// Close ends the body stream's lease. fasthttp calls it on the same
// pointer whatever the lease, so what it can check is that x is leased:
// a Close after x went back to the pool is refused.
func (p *passBody) Close() error {
	p.x.watch.stop()
	p.x.releaseOnce(p.x.owner())
	return nil
}

// modelSplice is the upstream request body, handed to fasthttp as a body
// stream so that the body is never copied: the client's bytes (or the
// translated body) in one piece, or, when an alias renames the model, the
// client's bytes with the model string replaced, in three. fasthttp writes
// it through WriteTo, in the goroutine running the call once it has taken
// a connection: that is where the call's connection is bound to the
// exchange's watcher, so a client that leaves can interrupt the call
// (watcher.bind).
type modelSplice struct {
	x     *exchange
	whole [3][]byte // the pieces, kept for a rewind
	parts [3][]byte // what Read has not returned yet
	size  int
	bound bool // Read has bound the call (see WriteTo)
	// built: the body is x.upBody, which is given back once sent
	// (sent) and built again for a rewind.
	built bool
}

var _ io.WriterTo = (*modelSplice)(nil)

// reset splits body around val, the model value (quotes included) that
// validation found: a view into body. The splice rewrites that member, the
// one slipstream routed on, whatever other text in the body looks like it.
func (m *modelSplice) reset(body, val, newModel []byte) {
	start := cap(body) - cap(val) // val is body[start:start+len(val)]
	if start < 0 || start+len(val) > len(body) || &body[start] != &val[0] {
		panic("BUG: the model value is not a view into the body")
	}
	end := start + len(val)
	m.whole = [3][]byte{body[:start+1], newModel, body[end-1:]}
	m.parts, m.bound = m.whole, false
	m.size = len(body) - len(val) + 2 + len(newModel)
}

// plain makes body the whole upstream body.
func (m *modelSplice) plain(body []byte) {
	m.whole = [3][]byte{body}
	m.parts, m.bound = m.whole, false
	m.size = len(body)
}

// setUpBody sends body upstream as it is (the client's bytes, or the
// translated request).
func (x *exchange) setUpBody(body []byte) {
	x.splice.x = x
	x.splice.plain(body)
	x.upReq.SetBodyStream(&x.splice, x.splice.size)
}

// setUpBuilt sends x.upBody, the body built for the upstream's dialect.
func (x *exchange) setUpBuilt() {
	x.setUpBody(x.upBody.B)
	x.splice.built = true
}

// sent gives a built body back once fasthttp has taken all of it (into
// its writer, or the socket): a call that waits for its head must not
// hold a body the provider already has, 10 KB per live translated stream
// of the live workload. A second call of the attempt builds it again
// (rewindUpBody).
func (m *modelSplice) sent() {
	if m.built && m.x.upBody != nil {
		pool.Put(m.x.upBody)
		m.x.upBody = nil
		m.whole, m.parts = [3][]byte{}, [3][]byte{}
	}
}

// setUpSplice sends the client's bytes with the aliased model spliced in.
func (x *exchange) setUpSplice() {
	x.splice.x = x
	x.splice.reset(x.body, x.modelVal, x.upModel)
	x.upReq.SetBodyStream(&x.splice, x.splice.size)
}

// rewindUpBody sets the upstream body again for a second call of the same
// attempt (fasthttp drops a body stream once written).
func (x *exchange) rewindUpBody() {
	if x.splice.x == nil {
		return // no body was set
	}
	if x.splice.built && x.upBody == nil { // sent: build it again
		if status, _ := x.appendUpBody(x.upFor); status == 0 {
			x.setUpBuilt()
		}
		return
	}
	x.splice.parts, x.splice.bound = x.splice.whole, false
	x.upReq.SetBodyStream(&x.splice, x.splice.size)
}

// appendWhole appends the whole body to dst, without consuming it.
func (m *modelSplice) appendWhole(dst []byte) []byte {
	for _, p := range m.whole {
		dst = append(dst, p...)
	}
	return dst
}

// bindCall tells the watcher and the keep-alive pings the connection the
// call took; false: the client is gone, the call must not be sent.
func (x *exchange) bindCall() bool {
	up := x.upResp.LocalAddr()
	x.awaitHead(up)
	return x.watch.bind(up)
}

// WriteTo writes what is left of the body to w. It refuses, before
// writing anything, a call whose client is already gone.
func (m *modelSplice) WriteTo(w io.Writer) (int64, error) {
	if m.x != nil && !m.x.bindCall() {
		return 0, errClientGone
	}
	var n int64
	for i := range m.parts {
		if len(m.parts[i]) == 0 {
			continue
		}
		c, err := w.Write(m.parts[i])
		n += int64(c)
		m.parts[i] = m.parts[i][c:]
		if err != nil {
			return n, err
		}
	}
	m.sent()
	return n, nil
}

func (m *modelSplice) Read(b []byte) (int, error) {
	if m.x != nil && !m.bound {
		if m.bound = true; !m.x.bindCall() {
			return 0, errClientGone
		}
	}
	n := 0
	for i := range m.parts {
		c := copy(b[n:], m.parts[i])
		m.parts[i] = m.parts[i][c:]
		n += c
		if n == len(b) {
			break
		}
	}
	if n == 0 {
		m.sent()
		return 0, io.EOF
	}
	return n, nil
}
