package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
)

// admit takes a slot for the request, or answers 429 in dialect d when
// limits.max_concurrent requests or limits.max_bytes_in_flight body bytes
// are already in flight; a refused request's body is left unread and its
// connection closes after the answer (reading an upload only to drop it
// would hold the client for as long as the upload takes). It returns the body size it counted; every
// admitted request is matched by one leave with that size, when its
// response (stream included) is fully written.
func (s *Server) admit(ctx *fasthttp.RequestCtx, d codec.Dialect) (int64, bool) {
	lim := &s.cfg.Limits
	if n := s.inflight.Add(1); lim.MaxConcurrent > 0 && n > int64(lim.MaxConcurrent) {
		s.inflight.Add(-1)
		closeUnread(ctx)
		s.writeError(ctx, d, fasthttp.StatusTooManyRequests, msgTooManyRequests)
		return 0, false
	}
	size := s.declaredSize(ctx)
	// A body larger than the whole budget is still served when nothing
	// else is in flight, so no request is refused forever.
	if b := s.bytesInFlight.Add(size); lim.MaxBytesInFlight > 0 && b > lim.MaxBytesInFlight.N() && b != size {
		s.bytesInFlight.Add(-size)
		s.inflight.Add(-1)
		closeUnread(ctx)
		s.writeError(ctx, d, fasthttp.StatusTooManyRequests, "too many request bytes in flight (limits.max_bytes_in_flight); retry shortly")
		return 0, false
	}
	s.served.Add(1)
	s.admits.Add(1)
	return size, true
}

const msgTooManyRequests = "too many requests in flight (limits.max_concurrent); retry shortly"

// hold counts n bytes of an upstream answer that x keeps whole in memory
// until its client has read it (a body read to be checked or translated)
// in the bytes in flight, next to the request body admit counted: while
// they are held, new requests meet limits.max_bytes_in_flight sooner. The
// request holding them is not refused (its upstream has answered).
func (x *exchange) hold(n int) {
	if !x.left {
		x.held += int64(n)
		x.s.bytesInFlight.Add(int64(n))
	}
}

// leave releases the slot admit took.
func (s *Server) leave(size int64) {
	s.bytesInFlight.Add(-size)
	s.inflight.Add(-1)
	s.admits.Add(-1)
}
