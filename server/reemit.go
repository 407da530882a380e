package server

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/pool"
	"slipstream/server/upstream"
)

// What slipstream re-emits from an upstream is validated strictly: on the
// same-dialect path an event or a body goes to the client byte for byte,
// so bytes the upstream got wrong (noise, a cut, a proxy's page) would
// reach the client's parser as they are. An event that fails the check
// ends the stream with the dialect's error event instead; a body that
// fails it becomes a 502 before any byte is sent.

var errMalformedEvent = errors.New("the upstream sent a malformed event")

// validRelayed reports whether ev, one event of an upstream stream of
// dialect d, may be relayed verbatim: its data is one JSON object, valid
// strictly (escapes and UTF-8 in strings too; one pass), or Chat's
// [DONE]; its name is a plain token; its raw bytes hold nothing but those
// fields, id:/retry: and comments. An event of comments only (a
// keep-alive) passes when every line is valid UTF-8.
func validRelayed(d codec.Dialect, ev *sse.Event) bool {
	if ev.Data == nil {
		return ev.Name == nil && validLines(ev.Raw)
	}
	if ev.Name != nil && !validName(ev.Name) {
		return false
	}
	if d == codec.DialectChat && string(ev.Data) == "[DONE]" {
		// the terminal of a Chat stream, not JSON
	} else if !codec.ValidTop(ev.Data, nil, nil) {
		return false
	}
	return canonical(ev) || validLines(ev.Raw)
}

// validName reports whether an event name is a non-empty run of letters,
// digits and "._-" (every name the four dialects use).
func validName(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// canonical reports whether ev.Raw is exactly its fields as providers
// write them, "event: NAME\n" (when named) then "data: DATA" and a blank
// line ("\n\n", "\r\n\r\n" or "\r\r"): the fast path, which looks at the
// few bytes around the data only.
func canonical(ev *sse.Event) bool {
	raw := ev.Raw
	if ev.Name != nil {
		if !bytes.HasPrefix(raw, prefixEvent) {
			return false
		}
		raw = raw[len(prefixEvent):]
		if len(raw) < len(ev.Name) || &raw[0] != &ev.Name[0] {
			return false
		}
		raw = skipOneEOL(raw[len(ev.Name):])
		if raw == nil {
			return false
		}
	}
	if !bytes.HasPrefix(raw, prefixData) {
		return false
	}
	raw = raw[len(prefixData):]
	if len(ev.Data) == 0 || len(raw) < len(ev.Data) || &raw[0] != &ev.Data[0] {
		return false // several data lines, or an empty one
	}
	switch rest := raw[len(ev.Data):]; string(rest) {
	case "\n\n", "\r\n\r\n", "\r\r":
		return true
	}
	return false
}

var (
	prefixEvent = []byte("event: ")
	prefixData  = []byte("data: ")
)

// skipOneEOL returns b after its leading line end, or nil when b does not
// start with one.
func skipOneEOL(b []byte) []byte {
	switch {
	case len(b) >= 2 && b[0] == '\r' && b[1] == '\n':
		return b[2:]
	case len(b) >= 1 && (b[0] == '\n' || b[0] == '\r'):
		return b[1:]
	}
	return nil
}

// validLines is the slow path of validRelayed: every line of raw is
// valid UTF-8 without control bytes, and blank, a comment, or one of the
// fields event, data, id and retry.
func validLines(raw []byte) bool {
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexAny(raw, "\r\n"); i >= 0 {
			line, raw = raw[:i], skipOneEOL(raw[i:])
		} else {
			raw = nil
		}
		if !utf8.Valid(line) || hasControl(line) {
			return false
		}
		name := line
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name = line[:i]
		}
		switch string(name) {
		case "", "event", "data", "id", "retry":
		default:
			return false
		}
	}
	return true
}

// hasControl reports whether b holds an ASCII control byte other than tab.
func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

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
	x.relayBody, x.relayOff = b, 0
	x.hold(len(b.B))
	return true
}

// readRelayBody reads the upstream body into a pooled buffer; the buffer
// is returned on error too (for the caller to Put).
func (x *exchange) readRelayBody() (*pool.Buffer, error) {
	size := x.upResp.Header.ContentLength()
	if size > maxUpstreamBody {
		x.closeUpstream(errUpstreamTooLarge)
		return nil, errUpstreamTooLarge
	}
	b := pool.Get(max(size, 4<<10))
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
