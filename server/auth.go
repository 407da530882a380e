package server

import (
	"bytes"
	"crypto/subtle"

	"github.com/valyala/fasthttp"

	"slipstream/server/provider"
)

// clientKey is one configured client key and its policy.
type clientKey struct {
	name   string
	secret []byte
	models []string
}

// allows reports whether the key may use the client-facing model name.
// A nil key (no keys configured) allows everything.
func (k *clientKey) allows(model string) bool {
	return k == nil || provider.MatchAny(k.models, model)
}

// authenticate finds the client key the request carries, in
// Authorization: Bearer, x-api-key, x-goog-api-key or Gemini's ?key=.
// With no keys configured every request passes with a nil key. Every
// configured key is compared in constant time, so timing does not reveal
// which key, or how much of one, matched.
func (s *Server) authenticate(ctx *fasthttp.RequestCtx) (*clientKey, bool) {
	if len(s.keys) == 0 {
		return nil, true
	}
	presented := presentedKey(ctx)
	if len(presented) == 0 {
		return nil, false
	}
	found := -1
	for i := range s.keys {
		if subtle.ConstantTimeCompare(presented, s.keys[i].secret) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil, false
	}
	return &s.keys[found], true
}

var bearer = []byte("Bearer ")

func presentedKey(ctx *fasthttp.RequestCtx) []byte {
	h := &ctx.Request.Header
	if v := h.Peek("Authorization"); len(v) > len(bearer) && bytes.EqualFold(v[:len(bearer)], bearer) {
		return bytes.TrimSpace(v[len(bearer):])
	}
	if v := h.Peek("X-Api-Key"); len(v) > 0 {
		return v
	}
	if v := h.Peek("X-Goog-Api-Key"); len(v) > 0 {
		return v
	}
	return ctx.QueryArgs().Peek("key")
}
