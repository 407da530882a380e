package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
)

// writeError answers with status and msg in dialect d's error shape
// (https://platform.openai.com/docs/api-reference/chat, https://docs.anthropic.com/en/api/errors,
// https://ai.google.dev/gemini-api/docs/troubleshooting). msg is plain text; it is escaped here
// and must never hold a secret.
func (s *Server) writeError(ctx *fasthttp.RequestCtx, d codec.Dialect, status int, msg string) {
	buf := pool.Get(len(msg) + 128)
	esc := codec.AppendEscaped(buf.B[:0], pool.S2B(msg))
	e := codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: esc}
	s.writeErrorValue(ctx, d, &e)
	buf.B = esc
	pool.Put(buf)
}

// writeErrorValue answers with e in dialect d's error shape; e's status is
// the HTTP status. The body is copied into the response, so e may be
// borrowed.
func (s *Server) writeErrorValue(ctx *fasthttp.RequestCtx, d codec.Dialect, e *codec.Error) {
	ctx.Response.ResetBody()
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	// A client may retry a 429 or a 503 (a full upstream pool, a provider
	// that is down): say when, unless the upstream said it.
	if (e.Status == fasthttp.StatusTooManyRequests || e.Status == fasthttp.StatusServiceUnavailable) && len(ctx.Response.Header.Peek("Retry-After")) == 0 {
		ctx.Response.Header.Set("Retry-After", "1")
	}
	w := ctx.Response.BodyWriter()
	buf := pool.Get(len(e.Message) + 128)
	buf.B = translate.AppendErrorObject(d, buf.B[:0], e)
	_, _ = w.Write(buf.B) // a body writer on an in-memory body never fails
	pool.Put(buf)
}
