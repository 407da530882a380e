package server

import (
	"errors"
	"io"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/upstream"
)

// What slipstream re-emits from an upstream is validated strictly: on the
// same-dialect path an event or a body goes to the client byte for byte,
// so bytes the upstream got wrong (noise, a cut, a proxy's page) would
// reach the client's parser as they are. An event that fails the check
// (translate.ValidRelayed) ends the stream with the dialect's error event
// instead; a body that fails it becomes a 502 before any byte is sent.

var errMalformedEvent = errors.New("the upstream sent a malformed event")

// bufferRelayBody reads the body of a non-streamed same-dialect reply
// whole, before any header goes to the client, into one pooled buffer
// (exact size when the upstream gave a Content-Length; at most
// maxUpstreamBody bytes), and checks that it is JSON, strictly. passBody then
// relays it from that buffer (x.relayBody). A body cut short, reset, too
// large or not JSON is answered here, in the client's dialect (502, or
// the upstream's own error status for an error that is not JSON), and
// bufferRelayBody returns false.
func (x *exchange) bufferRelayBody() bool {
	x.watch.start(x) // the body may drip: a departed client ends the read
	b, err := x.readRelayBody()
	x.watch.stop()
	if err != nil {
		pool.Put(b)
		if errors.Is(err, errClientGone) {
			x.clientGone()
			return false
		}
		x.result = resultUpstreamFailed
		x.upErr = err
		x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusBadGateway, "provider "+x.target.Provider.Name+": cannot read the upstream response")
		return false
	}
	if !x.validRelayBody(b.B) {
		pool.Put(b)
		if x.upResp.Header.ContentLength() == -2 && x.upResp.StatusCode() < 400 {
			// No length, no chunks: the close ended it, maybe cut short.
			x.result, x.upErr = resultUpstreamFailed, errNotJSON
			x.s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusBadGateway, "upstream "+x.target.Provider.Name+" closed its connection before the end of its answer")
			return false
		}
		x.respondNotJSON(x.upResp.StatusCode())
		return false
	}
	if x.upResp.StatusCode() < 300 {
		b = x.guardWhole(b)
	}
	x.relayBody, x.relayOff = b, 0
	x.hold(len(b.B))
	return true
}

// announcedMax is the most of an upstream body's announced length that is
// allocated before its bytes arrive; a longer body grows its buffer as
// it comes.
const announcedMax = 1 << 20

// readRelayBody reads the upstream body into a pooled buffer; the buffer
// is returned on error too (for the caller to Put).
func (x *exchange) readRelayBody() (*pool.Buffer, error) {
	size := x.upResp.Header.ContentLength()
	if size > maxUpstreamBody {
		x.closeUpstream(errUpstreamTooLarge)
		return nil, errUpstreamTooLarge
	}
	// The announced length sizes the buffer only up to announcedMax: an
	// upstream that announces 64 MB and sends a byte gets no 64 MB buffer.
	b := pool.Get(min(max(size, 4<<10), announcedMax))
	r := x.upStream()
	if r == nil {
		b.B = append(b.B[:0], x.upResp.Body()...)
	}
	var err error
	if r != nil {
		_, err = pool.ReadCapped(b, r, maxUpstreamBody) // grows through the pool when the length is unknown, or more than announced
	}
	if err == pool.ErrOverCap {
		err = errUpstreamTooLarge
	}
	x.closeUpstream(err)
	return b, err
}

// validRelayBody reports whether body is JSON, strictly; a body the
// upstream compressed (although asked not to) is checked decoded and
// relayed as it came, with its Content-Encoding.
func (x *exchange) validRelayBody(body []byte) bool {
	if !upstream.IsEncoded(&x.upResp) {
		return codec.Valid(body)
	}
	d := pool.Get(4 * len(body))
	var err error
	d.B, err = upstream.AppendDecoded(d.B[:0], body, x.upResp.Header.ContentEncoding(), maxUpstreamBody)
	ok := err == nil && codec.Valid(d.B)
	pool.Put(d)
	return ok
}

// readRelayed is passBody.Read over x.relayBody.
func (x *exchange) readRelayed(p []byte) (int, error) {
	n := copy(p, x.relayBody.B[x.relayOff:])
	x.relayOff += n
	x.bodyTail.write(p[:n])
	x.bytesOut += int64(n)
	if x.relayOff == len(x.relayBody.B) {
		x.bodyTail.done = true
		return n, io.EOF
	}
	return n, nil
}
