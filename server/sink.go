package server

// sink is where a relay writes the client's side of a response: whole
// events, in order, and when to send them. The relays (the pump, the mock,
// the keep-alive pings, an in-band error) write only through it, so a
// transport is one implementation: HTTP (SSE, or the JSON-array framing of
// a Gemini stream) here, WebSocket frames (frameSink, over ws.Sink).
//
// The byte slices are views valid only during the call; a sink copies what
// it keeps. Every method reports false once the client is gone; the sink
// has recorded that on the exchange (x.clientGone), and the relay stops.
type sink interface {
	// Event writes one upstream event relayed as it came: name and data
	// are its parts (name nil for an unnamed event, both nil for a
	// comment), raw the event's SSE bytes, terminator included. An SSE
	// sink writes raw; a frame sink writes data alone and drops comments.
	Event(name, data, raw []byte) bool
	// Events writes raw, zero or more whole SSE events slipstream built (a
	// translation, an error, a keep-alive comment). A frame sink splits
	// them and writes each event's data.
	Events(raw []byte) bool
	// Flush sends what was written.
	Flush() bool
	// Gone is closed when the client has left, for a transport that knows
	// it without writing; nil when departure shows only as a failed write
	// (or through the exchange's watcher).
	Gone() <-chan struct{}
}

// httpSink is the sink of an HTTP response body stream: it writes SSE
// bytes to fasthttp's buffered writer (writeOut: first-token time, the
// Gemini array framing, write deadlines, bytes out).
type httpSink struct {
	x *exchange
	w streamWriter
}

var _ sink = (*httpSink)(nil)

func (h *httpSink) Event(_, _, raw []byte) bool { return h.x.writeOut(h.w, raw) }
func (h *httpSink) Events(raw []byte) bool      { return h.x.writeOut(h.w, raw) }
func (h *httpSink) Flush() bool                 { return h.x.flush(h.w) }
func (h *httpSink) Gone() <-chan struct{}       { return h.x.goneCh }

// reset points h at x's stream writer w; h is x's own (x.hsink), set
// once per stream, so handing it out as a sink allocates nothing.
func (h *httpSink) reset(x *exchange, w streamWriter) { h.x, h.w = x, w }

// flushOut writes b, whole SSE events, to the client and flushes it: for
// what must leave now (a ping, the last event, an error).
func flushOut(out sink, b []byte) bool {
	return out.Events(b) && out.Flush()
}
