package server

import (
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/mock"
)

// serveMock answers from the built-in mock provider in the client's
// dialect, through the same encoders translated responses use. It reports
// whether x was handed off.
func (s *Server) serveMock(x *exchange) bool {
	d := x.rt.dialect
	if !translate.Supported(d) {
		s.writeError(x.ctx, d, fasthttp.StatusNotImplemented, "the mock provider cannot answer "+d.String()+" yet")
		return false
	}
	// The mock writes the client's tool names back: the body must be
	// valid JSON down to its strings.
	if !codec.Valid(x.body) {
		s.writeError(x.ctx, d, fasthttp.StatusBadRequest, "request body is not valid JSON")
		return false
	}
	if !x.decodeClient() {
		return false
	}
	m := s.mocks[x.target.Provider]
	if x.answer == nil {
		x.answer = &mock.Answer{} // kept with the pooled exchange
	}
	m.Build(x.answer, &x.req, x.InputTokens())
	x.ts = translate.AcquireStream(d, d, &x.req, x.stream)
	if x.stream {
		setSSEHeaders(x.ctx)
		x.handOffStream(streamMock)
		return true
	}
	out := pool.Get(4096)
	out.B = x.ts.AppendEvents(out.B[:0], x.answer.Events)
	x.ctx.SetContentType("application/json")
	x.ctx.Response.SetBody(out.B)
	pool.Put(out)
	return false
}

// relayMock streams the mock's answer one event at a time, pausing
// chunk_delay before each text delta after the first.
func (x *exchange) relayMock(out sink) {
	delay := x.s.mocks[x.target.Provider].Delay()
	evs := x.answer.Events
	texts := 0
	for i := range evs {
		if evs[i].Kind == codec.EventText {
			if texts > 0 && delay > 0 {
				time.Sleep(delay)
				if x.mockCancelled(out) {
					return
				}
			}
			texts++
		}
		x.out = x.ts.AppendEvents(x.out[:0], evs[i:i+1])
		if len(x.out) == 0 {
			continue
		}
		if !flushOut(out, x.out) {
			return
		}
	}
}
