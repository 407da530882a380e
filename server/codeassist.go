package server

import (
	"io"

	"slipstream/codec/translate"
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
