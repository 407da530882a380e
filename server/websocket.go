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
		Handler:    s.shared.serveFrame,
		Admit:      s.shared.wsAdmit,
		Leave:      s.shared.wsLeave,
		MaxFrame:   s.cfg.Limits.MaxBodyBytes.N(),
		StateBytes: s.cfg.Limits.WSStateBytes.N(),
		Ping:       s.cfg.Timeouts.WSPing.D(),
		MaxConns:   s.cfg.Limits.WSConnections,
		Now:        s.now,
		Panicked:   s.recovered,
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

// serveFrame is the transport's handler (ws.Options.Handler): the
// generation current when the frame arrived serves its request, as a POST
// through the same front door, authentication, admission and key policy.
// A stream is returned to be run to out.
func (sh *shared) serveFrame(ctx *fasthttp.RequestCtx, out ws.Sink) ws.Stream {
	return sh.current.Load().serveFrame(ctx, out)
}

func (s *Server) serveFrame(ctx *fasthttp.RequestCtx, out ws.Sink) ws.Stream {
	if !s.admitFront(ctx) {
		return nil
	}
	if x := s.serveRequest(ctx, out); x != nil {
		return x
	}
	return nil
}

// bindFrames makes x a WebSocket turn writing to out, when out is set:
// its client's departure is the sink's, and a stream is run by the
// transport (Run) rather than handed to fasthttp.
func (x *exchange) bindFrames(out ws.Sink) {
	if out != nil {
		x.fsink = frameSink{x: x, out: out}
		x.goneCh = out.Gone()
	}
}

// Run is the stream of a WebSocket turn (ws.Stream): the relay x was
// prepared for runs to the turn's frame sink on the caller's goroutine,
// and x is released. It owns x from the moment it is called, as
// writeStream does for HTTP; a panic in the relay ends only this turn,
// with the dialect's error event.
func (x *exchange) Run(out ws.Sink) {
	defer x.endFrames(x.owner())
	x.fsink.out = out
	x.runStream(&x.fsink)
}

func (x *exchange) endFrames(gen uint32) {
	if p := recover(); p != nil {
		x.recovered("WebSocket stream", p)
		x.writePanicEvent(&x.fsink)
	}
	x.fsink.Flush() // what a relay left queued (relayOut) leaves now
	x.releaseOnce(gen)
}

// frameSink is the sink of a WebSocket turn: the transport's frame sink,
// with what the exchange records of a stream (first-token time, bytes
// out as the SSE the events were, the client's departure).
type frameSink struct {
	x   *exchange
	out ws.Sink
}

var _ sink = (*frameSink)(nil)

func (f *frameSink) Event(name, data, raw []byte) bool {
	f.count(raw)
	return f.sent(f.out.Event(name, data, raw))
}

func (f *frameSink) Events(raw []byte) bool {
	f.count(raw)
	return f.sent(f.out.Events(raw))
}

func (f *frameSink) Flush() bool           { return f.sent(f.out.Flush()) }
func (f *frameSink) Gone() <-chan struct{} { return f.out.Gone() }

func (f *frameSink) count(raw []byte) {
	f.x.firstToken(raw)
	f.x.bytesOut += int64(len(raw))
}

// sent records a failed write as the client's departure.
func (f *frameSink) sent(ok bool) bool {
	if !ok {
		f.x.writeFailed()
	}
	return ok
}
