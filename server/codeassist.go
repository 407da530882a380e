package server

import (
	"bytes"
	"io"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
)

// Google accounts (gemini-account) are served by the Code Assist API:
// POST {base_url}/v1internal:generateContent (or
// :streamGenerateContent?alt=sse) with the Gemini request wrapped in an
// envelope {model, project, request}, and every answer (each stream
// event) wrapped as {"response": <Gemini response>, ...}. slipstream
// wraps the request once and unwraps the answers as they pass, so
// clients see plain Gemini.

// codeAssistBody wraps the built Gemini request in the Code Assist
// envelope and points the request at the v1internal method.
func (x *exchange) codeAssistBody() (int, string) {
	tok := x.try.acct
	if tok == nil {
		return 0, "" // unsigned: the upstream's 401 fails over
	}
	if tok.ProjectID == "" {
		return fasthttp.StatusBadRequest, "account " + x.try.cred.Name + " has no Code Assist project; log in again (slipstream login gemini) so it is discovered"
	}
	body, ok := x.upRequestBody()
	if !ok {
		return fasthttp.StatusInternalServerError, "cannot read the request body back"
	}
	b := pool.Get(len(body) + len(x.upModel) + len(tok.ProjectID) + 64)
	b.B = append(b.B[:0], `{"model":`...)
	b.B = codec.AppendQuoted(b.B, x.upModel)
	b.B = append(b.B, `,"project":`...)
	b.B = codec.AppendQuotedString(b.B, tok.ProjectID)
	b.B = append(b.B, `,"request":`...)
	b.B = append(b.B, bytes.TrimSpace(body)...)
	b.B = append(b.B, '}')
	if x.try.acctBody != nil {
		pool.Put(x.try.acctBody)
	}
	x.try.acctBody = b
	x.setUpBody(b.B) // a body stream like every upstream body (the call binds the client watcher through it)
	url := append(x.urlBuf[:0], x.target.Provider.BaseURL...)
	if x.stream {
		url = append(url, "/v1internal:streamGenerateContent?alt=sse"...)
	} else {
		url = append(url, "/v1internal:generateContent"...)
	}
	x.upReq.URI().UpdateBytes(url)
	x.urlBuf = url[:0]
	return 0, ""
}

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
