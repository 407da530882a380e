package server

import (
	"github.com/valyala/fasthttp"
)

// handle is the fasthttp request handler: route, authenticate, admit, then
// hand over to the route's operation.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if s.serveWebSocket(ctx) {
		return
	}
	rt, geminiModel, geminiStream := match(ctx.Method(), ctx.Path())
	if rt == nil {
		s.discardBody(ctx)
		s.writeError(ctx, dialectOfPath(ctx), fasthttp.StatusNotFound, "no route for "+string(ctx.Method())+" "+clipString(ctx.Path()))
		return
	}
	switch rt.op {
	case opRoot, opHealth:
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("ok\n")
		return
	case opReady:
		s.handleReady(ctx)
		return
	case opTelemetry:
		ctx.SetContentType("application/json")
		ctx.SetBodyString("{}")
		return
	}
	d := rt.dialect
	if rt.op == opModels {
		d = s.modelsDialect(ctx, rt)
	}
	key, ok := s.authenticate(ctx)
	if !ok {
		s.discardBody(ctx)
		s.writeError(ctx, d, fasthttp.StatusUnauthorized, "invalid or missing API key")
		return
	}
	if rt.op == opModels {
		s.handleModels(ctx, d, key)
		return
	}
	size, ok := s.admit(ctx, d)
	if !ok {
		s.discardBody(ctx)
		return
	}
	x := acquireExchange(s, ctx, rt, key, size)
	x.geminiModel, x.stream = geminiModel, geminiStream
	if !s.serve(x) {
		x.status = ctx.Response.StatusCode()
		x.releaseOnce()
	}
}

// serve runs the route's operation on x. It reports whether x was handed
// to a body stream, which then owns and releases it; otherwise the caller
// releases x.
func (s *Server) serve(x *exchange) (handedOff bool) {
	ctx, d := x.ctx, x.rt.dialect
	defer func() {
		// A hand-off is each path's last step, so a panic comes before it:
		// x is still the handler's.
		if p := recover(); p != nil {
			x.recovered("handler", p)
			ctx.Response.Header.Del("Content-Encoding")
			s.writeError(ctx, d, fasthttp.StatusInternalServerError, "internal error in slipstream")
			handedOff = false
		}
	}()
	if err := x.readBody(); err != nil {
		status, msg := fasthttp.StatusBadRequest, "cannot read the request body"
		if err == errBodyTooLarge {
			status, msg = fasthttp.StatusRequestEntityTooLarge, err.Error()
		}
		ctx.SetConnectionClose() // the rest of the body is not read
		s.writeError(ctx, d, status, msg)
		return false
	}
	if x.rt.op == opCountTokens {
		return s.countTokens(x)
	}
	return s.generate(x)
}

// handleReady answers 200 once the configuration is loaded and the
// listener is up, 503 otherwise (during shutdown).
func (s *Server) handleReady(ctx *fasthttp.RequestCtx) {
	if !s.ready.Load() {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		ctx.SetBodyString("not ready\n")
		return
	}
	ctx.SetBodyString("ready\n")
}

// handleServerError answers errors fasthttp detects before the handler
// runs (body too large, malformed HTTP) in the dialect of the path.
func (s *Server) handleServerError(ctx *fasthttp.RequestCtx, err error) {
	d := dialectOfPath(ctx)
	if _, ok := err.(*fasthttp.ErrSmallBuffer); ok {
		s.writeError(ctx, d, fasthttp.StatusRequestHeaderFieldsTooLarge, "request headers too large")
		return
	}
	if err == fasthttp.ErrBodyTooLarge {
		s.writeError(ctx, d, fasthttp.StatusRequestEntityTooLarge, "request body exceeds limits.max_body_bytes")
		return
	}
	s.writeError(ctx, d, fasthttp.StatusBadRequest, "cannot parse request: "+err.Error())
}

func clipString(b []byte) string {
	if len(b) > 128 {
		return string(b[:128]) + "..."
	}
	return string(b)
}
