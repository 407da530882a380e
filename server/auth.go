package server

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"slipstream/server/keys"
)

// clientKey is one configured client key and its policy (server/keys).
type clientKey = keys.Key

// authenticate finds the client key the request carries, in
// Authorization: Bearer, x-api-key, api-key (the Azure SDKs'),
// x-goog-api-key or Gemini's ?key=. None of them is forwarded upstream.
// With no keys configured every request passes with a nil key. Every
// configured key is compared in constant time (keys.Set.Find), so timing
// does not reveal which key, or how much of one, matched.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (*clientKey, bool) {
	if s.keys.Len() == 0 {
		return nil, true
	}
	k := s.keys.Find(presentedKey(ctx))
	return k, k != nil
}

var bearer = []byte("Bearer ")

func presentedKey(ctx *fasthttp.RequestCtx) []byte {
	if k, ok := headerKey(&ctx.Request.Header); ok {
		return k
	}
	return ctx.QueryArgs().Peek("key")
}

// headerKey is the key a request presents in its headers (Authorization
// Bearer, x-api-key, api-key, x-goog-api-key, in that order); ok is false
// when it presents none there. A Bearer of blanks is presented (and
// empty): the query's key is then not consulted.
func headerKey(h *fasthttp.RequestHeader) (key []byte, ok bool) {
	if v := h.Peek("Authorization"); len(v) > len(bearer) && bytes.EqualFold(v[:len(bearer)], bearer) {
		return bytes.TrimSpace(v[len(bearer):]), true
	}
	for _, name := range [...]string{"X-Api-Key", "Api-Key", "X-Goog-Api-Key"} {
		if v := h.Peek(name); len(v) > 0 {
			return v, true
		}
	}
	return nil, false
}
