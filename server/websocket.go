package server

import (
	"context"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/ws"
)

// newWebSocket builds the Responses WebSocket transport, whose frames are
// served by s.handle as POSTs on the upgrade's path.
func (s *Server) newWebSocket() *ws.Transport {
	o := ws.Options{
		Handler:    s.handle,
		MaxFrame:   s.cfg.Limits.MaxBodyBytes.N(),
		StateBytes: s.cfg.Limits.WSStateBytes.N(),
		Ping:       s.cfg.Timeouts.WSPing.D(),
		MaxConns:   s.cfg.Limits.WSConnections,
		Now:        s.now,
	}
	if s.cfg.Log.Access {
		o.Log = s.log
	}
	return ws.New(o)
}

// serveWebSocket takes a WebSocket upgrade on any path where POST is the
// Responses route (GET /v1/responses): it authenticates it as that POST
// would be, then hands the connection to the transport. It reports false
// for every other request.
func (s *Server) serveWebSocket(ctx *fasthttp.RequestCtx) bool {
	if !ws.IsUpgrade(ctx) {
		return false
	}
	rt, _, _ := match([]byte(fasthttp.MethodPost), ctx.Path())
	if rt == nil || rt.op != opGenerate || rt.dialect != codec.DialectResponses {
		return false
	}
	if _, ok := s.authenticate(ctx); !ok {
		s.writeError(ctx, codec.DialectResponses, fasthttp.StatusUnauthorized, "invalid or missing API key")
		return true
	}
	// The front door (admitFront) has checked Origin against
	// cors.allowed_origins; the upgrader's own same-origin check would
	// refuse every listed origin.
	ctx.Request.Header.Del("Origin")
	s.ws.Upgrade(ctx)
	return true
}

// shutdownWebSocket closes WebSocket connections once their response in
// flight completes, waiting at most until ctx ends.
func (s *Server) shutdownWebSocket(ctx context.Context) { s.ws.Shutdown(ctx.Done()) }
