package server

import (
	"io"

	"github.com/valyala/fasthttp"

	"slipstream/codec/translate"
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
	b.B = translate.AppendCodeAssistRequest(b.B[:0], x.upModel, tok.ProjectID, body)
	if x.try.acctBody != nil {
		pool.Put(x.try.acctBody)
	}
	x.try.acctBody = b
	x.setUpBody(b.B) // a body stream like every upstream body (the call binds the client watcher through it)
	url := append(x.out[:0], x.target.Provider.BaseURL...)
	if x.stream {
		url = append(url, "/v1internal:streamGenerateContent?alt=sse"...)
	} else {
		url = append(url, "/v1internal:generateContent"...)
	}
	x.upReq.URI().UpdateBytes(url)
	x.out = url[:0]
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
	if inner := translate.CodeAssistResponse(x.errorBody()); inner != nil {
		p := &x.try.peek
		p.pre = append(p.pre[:0], inner...)
		p.off, p.r = 0, nil
		x.upResp.SetBody(inner)
		x.upResp.Header.SetContentLength(len(inner))
	}
}

// unwrapReader is the Code Assist stream of one upstream attempt,
// unwrapped as the relay reads it (translate.CodeAssistReader); attempt
// ties it to that attempt (x.try.attempts then).
type unwrapReader struct {
	translate.CodeAssistReader
	attempt int
	on      bool
}

func (u *unwrapReader) reset(src io.Reader) {
	u.Reset(src)
	u.attempt, u.on = 0, false
}
