package server

import "github.com/valyala/fasthttp"

// countTokens answers count_tokens / input_tokens / countTokens.
func (s *Server) countTokens(x *exchange) {
	s.writeError(x.ctx, x.rt.dialect, fasthttp.StatusNotImplemented, "token counting is not available yet")
}
