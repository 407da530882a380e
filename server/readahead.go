package server

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// readAhead is the server's HeaderReceived hook: it sets how much of a
// request's body fasthttp reads before the handler runs. A request the
// head will admit gets fasthttp's usual read-ahead (up to 8 KiB, most
// often already in the read buffer with the head), so a small body is
// read in one step. Any other (refused by Host, Origin, route, content
// type, key, declared size or admission, or one the head cannot judge
// alone, such as a Gemini path or a key in the query) gets one byte: its
// refusal goes out at once instead of after up to 8 KiB of upload. A
// request admitted with one byte read ahead is served the same way,
// reading its body in more steps.
//
// The decision is advisory: the handler makes every check again, so a
// head judged wrongly here costs at most 8 KiB of waiting, never a
// wrong answer.
func (sh *shared) readAhead(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	s := sh.current.Load()
	if s.headAdmits(h) {
		return fasthttp.RequestConfig{MaxRequestBodySize: int(s.cfg.Limits.MaxBodyBytes.N())}
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: 1}
}

// headAdmits reports whether the handler will admit the request with
// head h, judged from the head alone: a POST of JSON on a fixed route
// (not a Gemini model path), within limits.max_body_bytes, with a key
// in its headers that is accepted, with room under the admission limits,
// from an allowed Host and Origin.
func (s *Server) headAdmits(h *fasthttp.RequestHeader) bool {
	n := h.ContentLength()
	if n <= 0 || int64(n) > s.cfg.Limits.MaxBodyBytes.N() || !h.IsPost() || !jsonContentType(h.ContentType()) {
		return false
	}
	if !s.front.hostAllowed(h.Host()) {
		return false
	}
	if o := h.Peek("Origin"); len(o) > 0 && !s.front.originAllowed(o) {
		return false
	}
	path, _, _ := bytes.Cut(h.RequestURI(), []byte{'?'})
	if rt, model, _ := match(h.Method(), path); rt == nil || model != nil {
		return false
	}
	if k, ok := headerKey(h); s.keys.Len() > 0 && (!ok || s.keys.Find(k) == nil) {
		return false
	}
	return s.hasRoom(int64(n))
}

// hasRoom reports whether admit would take a request of size body bytes
// now (see admit).
func (s *Server) hasRoom(size int64) bool {
	lim := &s.cfg.Limits
	if lim.MaxConcurrent > 0 && s.inflight.Load() >= int64(lim.MaxConcurrent) {
		return false
	}
	b := s.bytesInFlight.Load()
	return lim.MaxBytesInFlight <= 0 || b == 0 || b+size <= lim.MaxBytesInFlight.N()
}
