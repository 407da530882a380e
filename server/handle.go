package server

import (
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
	"slipstream/server/admin"
	"slipstream/server/ws"
)

// handle is the fasthttp request handler: check Host and Origin, route,
// authenticate, refuse what the head alone refuses, admit, then hand over
// to the route's operation. Every refusal before admission is answered
// with the body unread (fasthttp has read at most its first byte, see
// MaxRequestBodySize in New) and closes the connection.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	if s.serveAdmin(ctx) {
		return
	}
	if !s.admitFront(ctx) {
		return
	}
	if s.serveWebSocket(ctx) {
		return
	}
	s.serveRequest(ctx, nil)
}

// serveRequest admits and prepares a request past the front door: route,
// authenticate, refuse what the head alone refuses, admit, read the body,
// and run the route's operation up to its answer. out is nil for an HTTP
// request, whose stream is handed to fasthttp. For a WebSocket turn it is
// the turn's frame sink, and a stream is prepared, not handed off: x is
// returned, and the transport runs it to out (exchange.Run), which
// releases x. Otherwise it returns nil.
func (s *Server) serveRequest(ctx *fasthttp.RequestCtx, out ws.Sink) *exchange {
	id, start := s.begin(ctx)
	rt, geminiModel, geminiStream := match(ctx.Method(), ctx.Path())
	if rt == nil {
		s.refuseRoute(ctx)
		s.answered(ctx, rt, dialectOfPath(ctx), nil, id, start)
		return nil
	}
	switch rt.op {
	case opMetrics:
		s.serveMetrics(ctx)
		return nil
	case opRoot, opHealth:
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.SetBodyString("ok\n")
		return nil
	case opReady:
		s.handleReady(ctx)
		return nil
	case opTelemetry:
		if s.refuseContentType(ctx, rt, rt.dialect) {
			return nil
		}
		ctx.SetContentType("application/json")
		ctx.SetBodyString("{}")
		return nil
	}
	d := s.routeDialect(ctx, rt)
	key, ok := s.authenticate(ctx)
	if !ok {
		s.refuseKey(ctx, d)
		s.answered(ctx, rt, d, nil, id, start)
		return nil
	}
	if rt.op == opModels {
		s.handleModels(ctx, d, key)
		s.answered(ctx, rt, d, key, id, start)
		return nil
	}
	if s.refuseContentType(ctx, rt, d) || s.refuseHead(ctx, d, key, geminiModel) {
		s.answered(ctx, rt, d, key, id, start)
		return nil
	}
	size, ok := s.admit(ctx, d)
	if !ok {
		s.answered(ctx, rt, d, key, id, start)
		return nil
	}
	x := acquireExchange(s, ctx, rt, key, size)
	gen := x.owner()
	x.bindFrames(out)
	x.id, x.start = id, start
	x.geminiModel, x.stream = geminiModel, geminiStream
	if !s.serve(x) {
		x.status = ctx.Response.StatusCode()
		x.releaseOnce(gen)
		return nil
	}
	if out != nil && x.streamKind != streamNone {
		return x
	}
	return nil
}

// refuseHead answers what an authenticated request's head already
// refuses: a declared body over limits.max_body_bytes (413), and a Gemini
// model the key may not use (403; other dialects name the model in the
// body). It reports whether it answered; the connection then closes.
func (s *Server) refuseHead(ctx *fasthttp.RequestCtx, d codec.Dialect, key *clientKey, geminiModel []byte) bool {
	if n := ctx.Request.Header.ContentLength(); n > 0 && int64(n) > s.cfg.Limits.MaxBodyBytes.N() {
		closeUnread(ctx)
		s.writeError(ctx, d, fasthttp.StatusRequestEntityTooLarge, errBodyTooLarge.Error())
		return true
	}
	if geminiModel != nil && !key.Allows(pool.B2S(geminiModel)) {
		closeUnread(ctx)
		s.writeError(ctx, d, fasthttp.StatusForbidden, "this API key may not use model "+clipString(geminiModel))
		return true
	}
	return false
}

// routeDialect is the dialect a route answers in.
func (s *Server) routeDialect(ctx *fasthttp.RequestCtx, rt *route) codec.Dialect {
	if rt.op == opModels {
		return s.modelsDialect(ctx, rt)
	}
	return rt.dialect
}

// refuseRoute answers a request no route takes: 405 with Allow when the
// path is known but not the method, else 404. Its body is not read: the
// connection closes after the answer.
func (s *Server) refuseRoute(ctx *fasthttp.RequestCtx) {
	closeUnread(ctx)
	d := dialectOfPath(ctx)
	if allow := allowedMethods(ctx.Path()); allow != "" {
		ctx.Response.Header.Set("Allow", allow)
		s.writeError(ctx, d, fasthttp.StatusMethodNotAllowed, "method "+clipString(ctx.Method())+" is not allowed here; allowed: "+allow)
		return
	}
	s.writeError(ctx, d, fasthttp.StatusNotFound, "no route for "+clipString(ctx.Method())+" "+clipString(ctx.Path()))
}

// refuseKey answers 401 without reading the body of a request that has no
// valid key (it could be any size), and closes the connection.
func (s *Server) refuseKey(ctx *fasthttp.RequestCtx, d codec.Dialect) {
	closeUnread(ctx)
	s.writeError(ctx, d, fasthttp.StatusUnauthorized, "invalid or missing API key")
}

// expectContinue decides, from the head alone, whether a request that
// sent "Expect: 100-continue" may send its body: only once the checks
// handle makes before admission pass, and admission would. Otherwise it
// writes the refusal and returns its status; fasthttp then answers it and
// closes the connection, and the body is never read.
func (s *Server) expectContinue(ctx *fasthttp.RequestCtx) int {
	if admin.Owns(ctx.Path()) {
		return fasthttp.StatusContinue // its bodies are small; serveAdmin checks the rest
	}
	if !s.admitFront(ctx) {
		return ctx.Response.StatusCode()
	}
	rt, geminiModel, _ := match(ctx.Method(), ctx.Path())
	if rt == nil {
		s.refuseRoute(ctx)
		return ctx.Response.StatusCode()
	}
	d := s.routeDialect(ctx, rt)
	key, ok := s.authenticate(ctx)
	if !ok && rt.op != opHealth && rt.op != opReady && rt.op != opRoot && rt.op != opTelemetry && rt.op != opMetrics {
		s.refuseKey(ctx, d)
		return fasthttp.StatusUnauthorized
	}
	if s.refuseContentType(ctx, rt, d) || s.refuseHead(ctx, d, key, geminiModel) {
		return ctx.Response.StatusCode()
	}
	lim := &s.cfg.Limits
	if lim.MaxConcurrent > 0 && s.inflight.Load() >= int64(lim.MaxConcurrent) {
		s.writeError(ctx, d, fasthttp.StatusTooManyRequests, msgTooManyRequests)
		return fasthttp.StatusTooManyRequests
	}
	return fasthttp.StatusContinue
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
		closeUnread(ctx) // the rest of the body is not read
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
// runs (body too large, malformed HTTP) in the dialect of the path, with a
// short message of its own: fasthttp's error text quotes the request head,
// credentials included, and must reach neither the client nor a log.
func (s *Server) handleServerError(ctx *fasthttp.RequestCtx, err error) {
	d := dialectOfPath(ctx)
	if len(ctx.Path()) <= 1 {
		d = dialectOfPrefix(pathInParseError(err))
	}
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &small):
		s.writeError(ctx, d, fasthttp.StatusRequestHeaderFieldsTooLarge, "request headers too large")
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		s.writeError(ctx, d, fasthttp.StatusRequestEntityTooLarge, "request body exceeds limits.max_body_bytes")
	case errorKind(err) == "timeout":
		s.writeError(ctx, d, fasthttp.StatusRequestTimeout, "the request was not received in time")
	default:
		s.writeError(ctx, d, fasthttp.StatusBadRequest, "malformed HTTP request")
	}
}

// pathInParseError finds the request path in the text of a fasthttp parse
// error, which quotes the start of the request ("contents: \"POST /v1/...").
// The request is gone by then; the path only picks the dialect of the
// answer and is never written anywhere.
func pathInParseError(err error) string {
	s := err.Error()
	i := strings.Index(s, `contents: "`)
	if i < 0 {
		return ""
	}
	s = s[i+len(`contents: "`):]
	if i = strings.IndexByte(s, ' '); i < 0 {
		return ""
	}
	s = s[i+1:]
	if i = strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	return s
}

func clipString(b []byte) string {
	if len(b) > 128 {
		return string(b[:128]) + "..."
	}
	return string(b)
}
