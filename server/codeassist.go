package server

import (
	"bytes"
	"io"

	"github.com/tidwall/gjson"
)

// A Google account's answers (gemini-account, the Code Assist API) are
// wrapped as {"response": <Gemini response>, ...}, each stream event too;
// slipstream unwraps them as they pass, so clients see plain Gemini (the
// request's envelope is server/accounts' codeAssistBody).

// unwrapCodeAssist makes a Code Assist 200 answer plain Gemini: a JSON
// body is read whole and replaced by its "response" member; a stream is
// unwrapped event by event as the relay reads it.
func (x *exchange) unwrapCodeAssist() {
	if x.isEventStream() {
		u := &x.try.unwrap
		u.reset(x.upStream())
		u.attempt, u.on = x.try.attempts, true
		return
	}
	body := x.errorBody()
	if r := gjson.GetBytes(body, "response"); r.Exists() && r.IsObject() {
		inner := []byte(r.Raw)
		p := &x.try.peek
		p.pre = append(p.pre[:0], inner...)
		p.off, p.r = 0, nil
		x.upResp.SetBody(inner)
		x.upResp.Header.SetContentLength(len(inner))
	}
}

// unwrapReader rewrites a Code Assist event stream as the relay reads
// it: each event whose data is {"response": X, ...} becomes one with
// data X; anything else passes as it is.
type unwrapReader struct {
	src     io.Reader
	in, out []byte
	data    []byte // the current event's data (reused)
	off     int
	err     error
	attempt int
	on      bool
}

func (u *unwrapReader) reset(src io.Reader) {
	u.src, u.in, u.out, u.off, u.err, u.attempt, u.on = src, u.in[:0], u.out[:0], 0, nil, 0, false
}

func (u *unwrapReader) Read(b []byte) (int, error) {
	for u.off == len(u.out) {
		u.out, u.off = u.out[:0], 0
		if u.next() {
			continue
		}
		if u.err != nil {
			if len(u.in) > 0 { // a last event without its blank line
				u.out, u.in = append(u.out, u.in...), u.in[:0]
				continue
			}
			return 0, u.err
		}
		var buf [8192]byte
		n, err := u.src.Read(buf[:])
		u.in = append(u.in, buf[:n]...)
		u.err = err
	}
	n := copy(b, u.out[u.off:])
	u.off += n
	return n, nil
}

// next moves one complete event from in to out (unwrapped); false when
// in holds none yet.
func (u *unwrapReader) next() bool {
	end, sep := bytes.Index(u.in, []byte("\n\n")), 2
	if e := bytes.Index(u.in, []byte("\r\n\r\n")); e >= 0 && (end < 0 || e < end) {
		end, sep = e, 4
	}
	if end < 0 {
		return false
	}
	ev := u.in[:end]
	u.data = appendEventData(u.data[:0], ev)
	if data := u.data; len(data) > 0 {
		if r := gjson.GetBytes(data, "response"); r.Exists() && r.IsObject() {
			u.out = append(u.out, "data: "...)
			u.out = append(u.out, r.Raw...)
			u.out = append(u.out, '\n', '\n')
			u.in = u.in[:copy(u.in, u.in[end+sep:])]
			return true
		}
	}
	u.out = append(u.out, u.in[:end+sep]...)
	u.in = u.in[:copy(u.in, u.in[end+sep:])]
	return true
}
