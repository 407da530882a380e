package server

import (
	"bytes"
	"io"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
)

// peekReader is an account answer's body with bytes slipstream already
// read in front: the start of a 200 stream read to find an error event
// before the first byte reaches the client, or a whole error body read
// for its quota signal. attempt ties it to the upstream call it came
// from (x.try.attempts then).
type peekReader struct {
	pre     []byte
	off     int
	r       io.Reader // the rest of the body; nil: none
	attempt int
	on      bool
}

func (p *peekReader) Read(b []byte) (int, error) {
	if p.off < len(p.pre) {
		n := copy(b, p.pre[p.off:])
		p.off += n
		return n, nil
	}
	if p.r == nil {
		return 0, io.EOF
	}
	return p.r.Read(b)
}

func (p *peekReader) reset() {
	p.pre, p.off, p.r, p.attempt, p.on = p.pre[:0], 0, nil, 0, false
}

// upStream is the upstream body to relay: the response's body stream,
// or an account answer's body with the bytes already read in front.
func (x *exchange) upStream() io.Reader {
	if u := &x.try.unwrap; u.on && u.attempt == x.try.attempts {
		return u
	}
	if p := &x.try.peek; p.on && p.attempt == x.try.attempts {
		return p
	}
	return x.upResp.BodyStream()
}

// peekStreamError reads an account's 200 event stream up to its first
// event (comments skipped) and returns that event's data when it is an
// error (an `error` event or response.failed); the bytes read stay in
// front of the body for the relay.
func (x *exchange) peekStreamError() []byte {
	r := x.upResp.BodyStream()
	if r == nil {
		return nil
	}
	p := &x.try.peek
	p.reset()
	p.r, p.attempt, p.on = r, x.try.attempts, true
	var buf [4096]byte
	for len(p.pre) < 64<<10 {
		if ev, ok := firstEvent(p.pre); ok {
			return streamError(ev)
		}
		n, err := r.Read(buf[:])
		p.pre = append(p.pre, buf[:n]...)
		if err != nil {
			break
		}
	}
	ev, _ := firstEvent(append(p.pre, '\n', '\n'))
	return streamError(ev)
}

// firstEvent returns the first SSE event in b that is not a comment, and
// whether one is complete.
func firstEvent(b []byte) ([]byte, bool) {
	for {
		b = bytes.TrimLeft(b, "\r\n")
		end := bytes.Index(b, []byte("\n\n"))
		if e := bytes.Index(b, []byte("\r\n\r\n")); e >= 0 && (end < 0 || e < end) {
			end = e
		}
		if end < 0 {
			return nil, false
		}
		ev := b[:end]
		if len(ev) > 0 && ev[0] != ':' {
			return ev, true
		}
		b = b[end:]
	}
}

// streamError returns the JSON data of an error event, else nil.
func streamError(ev []byte) []byte {
	var name, data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if v, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			name = bytes.TrimSpace(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = bytes.TrimSpace(v)
		}
	}
	typ := gjson.GetBytes(data, "type").String()
	if string(name) == "error" || typ == "error" || typ == "response.failed" {
		if len(data) == 0 {
			data = []byte(`{}`)
		}
		return data
	}
	return nil
}

// streamErrorBody turns an in-stream error event's data into an error
// body the quota readers understand ({"error":{type, message, resets}})
// and the status it stands for: 429 for a usage or rate limit, 502
// otherwise.
func streamErrorBody(data []byte) ([]byte, int) {
	get := func(paths ...string) gjson.Result {
		for _, p := range paths {
			if r := gjson.GetBytes(data, p); r.Exists() && r.String() != "" {
				return r
			}
		}
		return gjson.Result{}
	}
	code := get("error.type", "error.code", "code", "response.error.code", "response.error.type").String()
	msg := get("error.message", "message", "response.error.message").String()
	b := append([]byte(`{"error":{"type":`), codec.AppendQuotedString(nil, code)...)
	b = append(b, `,"message":`...)
	b = append(b, codec.AppendQuotedString(nil, msg)...)
	if r := get("error.resets_at", "resets_at", "response.error.resets_at"); r.Exists() {
		b = append(b, `,"resets_at":`...)
		b = strconv.AppendInt(b, r.Int(), 10)
	}
	if r := get("error.resets_in_seconds", "resets_in_seconds", "response.error.resets_in_seconds"); r.Exists() {
		b = append(b, `,"resets_in_seconds":`...)
		b = strconv.AppendInt(b, r.Int(), 10)
	}
	b = append(b, "}}"...)
	status := fasthttp.StatusBadGateway
	switch code {
	case "usage_limit_reached", "rate_limit_exceeded", "rate_limit_error", "insufficient_quota":
		status = fasthttp.StatusTooManyRequests
	case "overloaded_error", "server_is_overloaded":
		status = fasthttp.StatusServiceUnavailable
	}
	return b, status
}

// maxAggregate bounds a stream read whole for a non-streamed client.
const maxAggregate = 64 << 20

// aggregateStream reads an account's whole 200 event stream (a
// non-streamed client of a backend that only streams) and makes the
// response a JSON body: the final response object of response.completed
// (or response.incomplete), its output filled from the
// response.output_item.done events when the backend left it empty. It
// returns the data of an error event instead (the answer then fails
// over); a stream without a final response becomes a 502 error body.
func (x *exchange) aggregateStream() []byte {
	r := x.upResp.BodyStream()
	if r == nil {
		return nil
	}
	raw, err := pool.AppendCapped(nil, r, maxAggregate-1)
	if err == pool.ErrOverCap {
		err = nil // the first maxAggregate bytes are aggregated, as before
	}
	if err != nil {
		return []byte(`{"type":"error","error":{"type":"server_error","message":"the account's stream broke before it ended"}}`)
	}
	var final []byte
	var items [][]byte
	for len(raw) > 0 {
		ev, ok := firstEvent(raw)
		if !ok {
			break
		}
		raw = raw[bytes.Index(raw, ev)+len(ev):]
		if data := streamError(ev); data != nil {
			return data
		}
		data := eventData(ev)
		switch gjson.GetBytes(data, "type").String() {
		case "response.output_item.done":
			items = append(items, []byte(gjson.GetBytes(data, "item").Raw))
		case "response.completed", "response.incomplete":
			final = []byte(gjson.GetBytes(data, "response").Raw)
		}
	}
	if len(final) == 0 {
		return []byte(`{"type":"error","error":{"type":"server_error","message":"the account's stream ended without its final response"}}`)
	}
	if out := gjson.GetBytes(final, "output"); len(items) > 0 && (!out.Exists() || len(out.Array()) == 0) {
		arr := append([]byte{'['}, bytes.Join(items, []byte{','})...)
		arr = append(arr, ']')
		final = setMember(final, "output", arr)
	}
	x.upResp.Header.SetContentType("application/json")
	x.upResp.SetBody(final)
	x.upResp.Header.SetContentLength(len(final))
	p := &x.try.peek
	p.reset()
	p.pre, p.attempt, p.on = append(p.pre[:0], final...), x.try.attempts, true
	return nil
}

// eventData is the joined data of one SSE event.
func eventData(ev []byte) []byte { return appendEventData(nil, ev) }

// appendEventData appends the joined data lines of one SSE event to dst.
func appendEventData(dst, ev []byte) []byte {
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		if v, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:")); ok {
			dst = append(dst, bytes.TrimSpace(v)...)
		}
	}
	return dst
}

// setMember returns obj with member key's value replaced by val (added
// when absent), in one pass over obj.
func setMember(obj []byte, key string, val []byte) []byte {
	out := make([]byte, 0, len(obj)+len(val))
	out = append(out, '{')
	m := codec.ObjectMembers(obj)
	for {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		if string(k) == key {
			continue
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, v...)
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, '"', ':')
	out = append(out, val...)
	return append(out, '}')
}
