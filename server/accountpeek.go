package server

import (
	"io"

	"slipstream/codec/sse"
	"slipstream/codec/translate"
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
		if ev, ok := sse.FirstEvent(p.pre); ok {
			return translate.StreamError(ev)
		}
		n, err := r.Read(buf[:])
		p.pre = append(p.pre, buf[:n]...)
		if err != nil {
			break
		}
	}
	ev, _ := sse.FirstEvent(append(p.pre, '\n', '\n'))
	return translate.StreamError(ev)
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
	final, errData := translate.AggregateResponses(raw)
	if errData != nil {
		return errData
	}
	x.upResp.Header.SetContentType("application/json")
	x.upResp.SetBody(final)
	x.upResp.Header.SetContentLength(len(final))
	p := &x.try.peek
	p.reset()
	p.pre, p.attempt, p.on = append(p.pre[:0], final...), x.try.attempts, true
	return nil
}
