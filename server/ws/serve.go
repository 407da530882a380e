package ws

import (
	"bytes"
	"io"

	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/openai"
	"slipstream/pool"
)

// handle serves one client frame.
func (c *conn) handle(b []byte, binary bool) {
	if chained, n, ok := c.prepare(b, binary); ok {
		c.serveTurn(chained, n)
	}
}

// prepare checks frame b and expands it into c.body; it returns whether
// the frame chains on a stored response and its trimmed length. False: it
// was answered (an error event, a close, a prewarm). It is apart from handle
// so that its locals (the parsed frame, the transcript) are off the stack
// while the turn runs: a turn calls deep, and a frame's worth of bytes
// more took a translated turn's goroutine past 8 KiB.
func (c *conn) prepare(b []byte, binary bool) (chained bool, n int, ok bool) {
	if binary {
		c.sendError(400, "invalid_request_error", "unsupported_frame", "frames must be text frames holding one JSON object")
		return false, 0, false
	}
	if !utf8.Valid(b) { // RFC 6455 section 8.1
		c.closeWith(closeInvalidPayload, "a text frame holds invalid UTF-8")
		return false, 0, false
	}
	// A truncated frame must not be completed by the expansion into a
	// valid request: its shape is checked before a member is acted on.
	b = bytes.TrimSpace(b)
	f, ok := openai.ParseFrame(b, &c.vals)
	if !ok {
		c.sendError(400, "invalid_request_error", "invalid_json", "the frame is not one complete JSON object (or names a member twice)")
		return false, 0, false
	}
	if f.Prev != nil && f.PrevID == nil && string(f.Prev) != "null" {
		c.sendError(400, "invalid_request_error", "invalid_previous_response_id", "previous_response_id must be a string")
		return false, 0, false
	}
	if string(f.Type) != "response.create" {
		c.sendError(400, "invalid_request_error", "unsupported_frame", "unsupported frame type; expected response.create")
		return false, 0, false
	}
	c.t.frames.Add(1)
	// The stored transcript is taken whatever happens next: it is either
	// continued (and becomes part of this request's body), replaced, or
	// dropped because the client no longer chains on it.
	prev := c.t.store.take(c)
	defer prev.release()
	if f.PrevID != nil && !prev.matches(f.PrevID) {
		c.t.notFound.Add(1)
		c.sendError(400, "invalid_request_error", "previous_response_not_found",
			"previous response not found on this connection; send the full input")
		if c.t.logging() {
			c.t.logf("WS %s frame=%d previous_response_not_found", pathOf(&c.hdr), c.frames)
		}
		return false, 0, false
	}
	if f.PrevID == nil {
		prev.release()
	} else {
		c.t.chained.Add(1)
	}
	if f.Prewarm {
		c.prewarm(&f)
		return false, 0, false
	}
	chained = f.PrevID != nil
	tagged := f.Tagged || chained && prev.tagged
	if !chained && !c.frag {
		c.expandInPlace(b, f.Grows())
	} else {
		in, out := prev.items()
		c.body = pool.Get(len(in) + len(out) + len(b) + 64)
		c.body.B = c.exp.AppendBody(c.body.B[:0], b, in, out)
		prev.release()
		c.releaseFrame() // before the handler admits the body
	}
	c.noteChecked(tagged)
	if int64(len(c.body.B)) > c.t.cfg().MaxFrame {
		c.releaseBody()
		if c.t.logging() {
			c.t.logf("WS %s frame=%d expanded body over the limit: close 1009", pathOf(&c.hdr), c.frames)
		}
		c.closeWith(closeTooBig, "request exceeds limits.max_body_bytes")
		return false, 0, false
	}
	return chained, len(b), true
}

// noteChecked records what the expansion knows of c.body, for the
// server (turnSink.Checked). tagged is whether the frame or the
// transcript it continues may hold an origin tag.
func (c *conn) noteChecked(tagged bool) {
	c.checked = Checked{Routed: c.exp.Routed, Tagged: tagged, Size: len(c.body.B)}
	c.checkedOK = c.exp.RoutedOK
}

// expandInPlace expands frame b, a view into c.in, into the body within
// the same buffer, which becomes c.body: a frame that does not chain is
// most often the whole conversation, and the largest frames are those, so
// they do not take twice their size while they are served. A fragmented
// message is copied instead: its buffer grew by doubling, and the body
// may become the transcript the connection keeps. Its reservation in
// the bytes in flight is given back: the handler counts the body when it
// admits it. c.in has slack bytes of room past the payload (room).
func (c *conn) expandInPlace(b []byte, grows bool) {
	c.body, c.in = c.in, nil
	c.body.B = c.exp.ExpandInPlace(c.body.B[:cap(c.body.B)], b, grows)
	c.leave()
}

// prewarm answers generate:false locally: a created and a completed event
// of an empty response whose id the next frame chains on. No upstream is
// called; the frame's input becomes the transcript.
func (c *conn) prewarm(f *openai.Frame) {
	id := appendResponseID(c.id[:0])
	model := f.Model
	if model == nil || !codec.Valid(model) {
		model = []byte("null")
	}
	now := c.t.cfg().Now().Unix()
	c.msg = appendPrewarm(c.msg[:0], false, id, model, now)
	if c.write(c.msg) != nil {
		c.setGone()
		return
	}
	c.msg = appendPrewarm(c.msg[:0], true, id, model, now)
	if c.write(c.msg) != nil {
		c.setGone()
		return
	}
	t := transcript{body: pool.Get(len(f.Input) + 64), tagged: f.Tagged}
	t.body.B = openai.AppendItems(t.body.B[:0], f.Input)
	t.inEnd = len(t.body.B)
	t.idLen = copy(t.id[:], id)
	c.t.store.put(c, t)
	if c.t.logging() {
		c.t.logf("WS %s frame=%d prewarm", pathOf(&c.hdr), c.frames)
	}
}

// serveTurn runs the expanded body through the server's handler as a
// POST and relays its answer: a stream the handler prepared runs here, on
// the turn's goroutine, to the turn's sink; a whole answer or an error is read from
// the response.
func (c *conn) serveTurn(chained bool, frameSize int) {
	rc := &c.rctx
	rc.Request.Reset()
	rc.Response.Reset()
	c.hdr.CopyTo(&rc.Request.Header)
	for i := 0; i < c.exp.Headers(); i++ {
		rc.Request.Header.SetBytesKV(c.exp.Header(i))
	}
	size := len(c.body.B)
	rc.Request.SetBodyRaw(c.body.B)
	rc.Request.Header.SetContentLength(size)
	c.sink = turnSink{c: c}
	st := c.t.cfg().Handler(rc, &c.sink)
	resp := &rc.Response
	status := resp.StatusCode()
	if ts := resp.Header.Peek("X-Codex-Turn-State"); len(ts) > 0 && headerText(ts) {
		c.msg = appendTurnState(c.msg[:0], ts)
		if c.write(c.msg) != nil {
			c.setGone()
		}
	}
	switch {
	case st != nil:
		c.relay(st)
	case status == fasthttp.StatusOK && isEventStream(resp.Header.ContentType()):
		c.relayBody(resp)
	case status == fasthttp.StatusOK:
		c.relayWhole(resp)
	default:
		c.relayError(resp)
	}
	if c.t.logging() {
		c.t.logf("WS %s frame=%d chained=%v frame_bytes=%d body=%d status=%d", pathOf(&c.hdr), c.frames, chained, frameSize, size, status)
	}
	c.sink = turnSink{}
	rc.Request.Reset()
	rc.Response.Reset()
	c.releaseBody()
}

func (c *conn) releaseBody() {
	pool.Put(c.body)
	c.body = nil
	c.checkedOK = false
	pool.Put(c.out)
	c.out = nil
}

func isEventStream(ct []byte) bool {
	return len(ct) >= 17 && string(ct[:17]) == "text/event-stream"
}

// relay runs the stream the handler prepared to the turn's sink, which
// sends each event as one text frame (its data, as is) and collects the
// output items; then it ends the turn (endRelay). The stream is run even
// when the client already left: Run releases it.
func (c *conn) relay(st Stream) {
	c.out = pool.Get(4 << 10)
	st.Run(&c.sink)
	c.endRelay(&c.sink.r)
}

// relayBody relays an event stream the handler answered as one body.
func (c *conn) relayBody(resp *fasthttp.Response) {
	body, _ := c.readBody(resp)
	c.out = pool.Get(4 << 10)
	c.sink.Events(body)
	c.endRelay(&c.sink.r)
}

// endRelay sends what is queued and ends a relayed stream: without a
// terminal event it was truncated, which the client is told; on
// response.completed the transcript the next frame may chain on is kept.
func (c *conn) endRelay(r *relayState) {
	if c.flush() != nil {
		c.setGone()
	}
	select {
	case <-c.gone:
		return
	default:
	}
	if !r.done {
		c.sendError(502, "server_error", "stream_truncated", "the upstream stream ended before response.completed")
		return
	}
	if r.completed && r.idLen > 0 {
		c.keepOrDrop(r)
	}
}

// keepOrDrop keeps the transcript of a completed response, or, when its
// output items outgrew the state budget during the turn, stores nothing,
// as store.put does for a transcript over the budget: the next frame that
// chains on the response is answered previous_response_not_found.
func (c *conn) keepOrDrop(r *relayState) {
	if !r.outgrown {
		c.keep(r)
		return
	}
	c.t.store.drop(c)
	if c.t.logging() {
		c.t.logf("WS %s frame=%d output over limits.ws_state_bytes: transcript not kept", pathOf(&c.hdr), c.frames)
	}
}

// relayState is what relay learns from the events of one response.
type relayState struct {
	done      bool // a terminal event went out
	completed bool // it was response.completed
	outgrown  bool // the output items outgrew the state budget: c.out was dropped
	id        [64]byte
	idLen     int
	outputs   int
}

// relayEvent handles one event: most are queued as they are; an error
// event without a status becomes a wrapped error Codex acts on.
func (c *conn) relayEvent(r *relayState, name, data []byte) {
	if len(data) == 0 || data[0] != '{' {
		return // comments, [DONE]
	}
	if len(name) == 0 {
		name = codec.StrContent(codec.Member(data, "type"))
	}
	switch string(name) {
	case "response.output_item.done":
		if item := codec.Member(data, "item"); codec.IsObject(item) && !r.outgrown {
			c.gather(r, item)
		}
	case "response.completed":
		r.done, r.completed = true, true
		c.noteCompleted(r, data)
	case "response.failed", "response.incomplete":
		r.done = true
	case "error":
		r.done = true
		if codec.Member(data, "status") == nil {
			data = c.wrapStreamError(data)
		}
	}
	c.queue(data)
}

// gather adds item to the output items kept for the transcript (c.out),
// unless the transcript is then larger than the store accepts
// (limits.ws_state_bytes): nothing else bounds the items of a turn, and
// store.put would only refuse them once it completed. An item that cannot
// fit is not copied; the buffer's growth is checked after the copy.
func (c *conn) gather(r *relayState, item []byte) {
	if !c.outFits(len(item) + 1) {
		c.outgrow(r)
		return
	}
	c.out.B = openai.AppendItemList(c.out.B, 0, item)
	r.outputs++
	if !c.outFits(0) {
		c.outgrow(r)
	}
}

// noteCompleted takes the response id, and the output items when no
// output_item.done carried them (one event's worth, bounded by the
// stream's event size; store.put refuses them if they are over the
// budget).
func (c *conn) noteCompleted(r *relayState, data []byte) {
	resp := codec.Member(data, "response")
	r.idLen = copy(r.id[:], codec.StrContent(codec.Member(resp, "id")))
	if r.outputs == 0 && !r.outgrown {
		c.out.B = openai.AppendItems(c.out.B[:0], codec.Member(resp, "output"))
	}
}

// outFits reports whether the transcript this turn would keep (c.body and
// c.out, measured as transcript.size measures them) is within the state
// budget once c.out holds n bytes more.
func (c *conn) outFits(n int) bool {
	size := max(cap(c.out.B), len(c.out.B)+n)
	if c.body != nil {
		size += cap(c.body.B)
	}
	return c.t.store.fits(int64(size))
}

// outgrow drops the output items gathered and marks the turn: its
// transcript is not kept (keepOrDrop).
func (c *conn) outgrow(r *relayState) {
	pool.Put(c.out)
	c.out = nil
	r.outgrown = true
}

// keep stores the transcript of a completed response: this request's body
// (its input items) and the response's output items.
func (c *conn) keep(r *relayState) {
	t := transcript{body: c.body, inStart: c.exp.InStart, inEnd: c.exp.InEnd, out: c.out}
	t.tagged = c.checked.Tagged || !c.checkedOK || c.out != nil && codec.MayHoldOriginTag(c.out.B)
	t.idLen = copy(t.id[:], r.id[:r.idLen])
	c.body, c.out = nil, nil
	c.t.store.put(c, t)
}

// wrapStreamError rewrites a Responses stream error event
// ({"type":"error","code":..,"message":..}, or one holding an error
// object) into the wrapped shape, with the status its code implies.
func (c *conn) wrapStreamError(data []byte) []byte {
	obj := codec.Member(data, "error")
	code := codec.Member(obj, "code")
	if !codec.IsObject(obj) {
		code = codec.Member(data, "code")
		status := statusForCode(codec.StrContent(code))
		obj = append([]byte(`{"type":`), errorTypeJSON(status)...)
		obj = append(obj, `,"code":`...)
		obj = appendOr(obj, code, "null")
		obj = append(obj, `,"message":`...)
		obj = appendOr(obj, codec.Member(data, "message"), `""`)
		obj = append(obj, '}')
	}
	return appendWrappedError(nil, statusForCode(codec.StrContent(code)), obj, nil)
}

func errorTypeJSON(status int) string { return `"` + errorType(status) + `"` }

func appendOr(dst, v []byte, def string) []byte {
	if len(v) == 0 {
		return append(dst, def...)
	}
	return append(dst, v...)
}

// relayWhole answers a 200 that is not a stream (an upstream that ignored
// stream:true): the response object's output items and its completion.
func (c *conn) relayWhole(resp *fasthttp.Response) {
	body, err := c.readBody(resp)
	if err != nil || !codec.Valid(body) {
		c.sendError(502, "server_error", "bad_response", "the upstream answer is not a JSON response object")
		return
	}
	c.out = pool.Get(len(body))
	c.out.B = openai.AppendItems(c.out.B[:0], codec.Member(body, "output"))
	items := codec.ArrayElems(codec.Member(body, "output"))
	for item, ok := items.Next(); ok; item, ok = items.Next() {
		c.msg = append(c.msg[:0], `{"type":"response.output_item.done","item":`...)
		c.msg = append(append(c.msg, item...), '}')
		if c.write(c.msg) != nil {
			c.setGone()
			return
		}
	}
	c.msg = append(c.msg[:0], `{"type":"response.completed","response":`...)
	c.msg = append(append(c.msg, body...), '}')
	if c.write(c.msg) != nil {
		c.setGone()
		return
	}
	r := relayState{}
	r.idLen = copy(r.id[:], codec.StrContent(codec.Member(body, "id")))
	if r.idLen > 0 {
		c.keep(&r)
	}
}

// maxErrorBody bounds an error body read to build an error event.
const maxErrorBody = 1 << 20

// relayError turns an HTTP error answer into a wrapped error event with
// its status: the OpenAI error object of the body when it has one, and
// the retry-after header.
func (c *conn) relayError(resp *fasthttp.Response) {
	status := resp.StatusCode()
	body, _ := c.readBody(resp)
	obj := codec.Member(body, "error")
	if !codec.IsObject(obj) || !codec.Valid(obj) {
		c.msg = appendErrorObject(c.msg[:0], errorType(status), "", string(codec.AppendClipped(nil, body)))
		obj = c.msg
	}
	ev := appendWrappedError(nil, status, obj, resp.Header.Peek("Retry-After"))
	if c.write(ev) != nil {
		c.setGone()
	}
}

func errorType(status int) string {
	switch {
	case status == 401:
		return "authentication_error"
	case status == 429:
		return "rate_limit_error"
	case status < 500:
		return "invalid_request_error"
	}
	return "server_error"
}

// readBody returns a non-streamed answer's body, reading (at most
// maxErrorBody bytes of) a body stream into c.msg and closing it.
func (c *conn) readBody(resp *fasthttp.Response) ([]byte, error) {
	r := resp.BodyStream()
	if r == nil {
		return resp.Body(), nil
	}
	if cl, ok := r.(io.Closer); ok && !c.setStream(cl) {
		_ = resp.CloseBodyStream()
		return nil, io.ErrUnexpectedEOF
	}
	buf, err := pool.AppendCapped(c.msg[:0], r, maxErrorBody)
	c.setStream(nil)
	_ = resp.CloseBodyStream()
	c.msg = nil // the body is handed out; the next event builds anew
	if err == pool.ErrOverCap {
		err = nil // what was read is enough to report the error
	}
	return buf, err
}

// sendError sends a wrapped error event.
func (c *conn) sendError(status int, typ, code, msg string) {
	obj := appendErrorObject(nil, typ, code, msg)
	c.msg = appendWrappedError(c.msg[:0], status, obj, nil)
	if c.write(c.msg) != nil {
		c.setGone()
	}
}
