package server

import (
	"context"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/ws"
)

// setupWebSocket builds the Responses WebSocket transport with the first
// generation, and puts a later generation's settings in force on it. One
// transport serves every generation: its frames are served as POSTs on
// the upgrade's path by the generation current when each frame arrives,
// so a reload leaves open sockets open (see revokeWebSockets).
func (sh *shared) setupWebSocket(s *Server) {
	if sh.ws == nil {
		sh.ws = ws.New(s.wsOptions())
		return
	}
	sh.ws.Update(s.wsOptions())
}

// revokeWebSockets closes the sockets whose upgrade credential next no
// longer accepts (a key removed or changed), once the frame each has in
// flight is answered; the others stay open.
func (s *Server) revokeWebSockets(next *Server) {
	if n := s.ws.Revoke(next.acceptsKey); n > 0 {
		s.log.Printf("config reload: closing %d WebSocket connection(s) whose API key is no longer configured", n)
	}
}

// acceptsKey reports whether a request presenting key would be
// authenticated.
func (s *Server) acceptsKey(key []byte) bool {
	return s.keys.Len() == 0 || s.keys.Find(key) != nil
}

// wsOptions are the transport's settings under s's configuration.
func (s *Server) wsOptions() ws.Options {
	o := ws.Options{
		Handler:    s.shared.dispatch,
		Admit:      s.shared.wsAdmit,
		Leave:      s.shared.wsLeave,
		MaxFrame:   s.cfg.Limits.MaxBodyBytes.N(),
		StateBytes: s.cfg.Limits.WSStateBytes.N(),
		Ping:       s.cfg.Timeouts.WSPing.D(),
		MaxConns:   s.cfg.Limits.WSConnections,
		Now:        s.now,
	}
	if s.cfg.Log.Access {
		o.Log = s.log
	}
	return o
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
	s.ws.Upgrade(ctx, presentedKey(ctx))
	return true
}

// shutdownWebSocket closes WebSocket connections once their response in
// flight completes, waiting at most until ctx ends.
func (s *Server) shutdownWebSocket(ctx context.Context) { s.ws.Shutdown(ctx.Done()) }
