package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/server/provider"
	"slipstream/server/upstream"
)

// clientView is what attempts forward of the client's request, captured
// once from the RequestCtx on the handler goroutine before the first
// attempt is built. Every attempt builds from it alone, so a retry that
// runs beside a keep-alive stream (after the handler returned and
// fasthttp may have recycled the request) reads nothing of the ctx.
type clientView struct {
	hdr     fasthttp.RequestHeader // the client's headers a same-dialect upstream takes
	ua      []byte                 // the client's User-Agent
	query   []byte                 // the query parameters a same-dialect upstream takes, re-escaped
	names   []string               // the registry's affinity headers (Registry.AffinityHeaders)
	named   []uint64               // the Hash of each one's value, or 0
	session uint64                 // the Hash of the client's session header, or 0
	on      bool
}

func (c *clientView) reset() {
	if c.on {
		c.hdr.Reset()
		c.ua, c.query = c.ua[:0], c.query[:0]
		c.names, c.named, c.session = nil, c.named[:0], 0
		c.on = false
	}
}

// client returns the client's request as attempts forward it, capturing
// it on first use (the first attempt is built on the handler goroutine).
func (x *exchange) client() *clientView {
	c := &x.try.client
	if !c.on {
		c.capture(x)
	}
	return c
}

// capture copies from x.ctx what attempts need: the headers and query a
// same-dialect upstream takes (the client's dialect's forward list), the
// User-Agent, and, when a provider keeps conversations on a credential,
// the hashes of the headers that name one.
func (c *clientView) capture(x *exchange) {
	h := &x.ctx.Request.Header
	d := x.rt.dialect
	upstream.CopyRequestHeaders(&c.hdr, h, x.s.fwd[d])
	c.ua = append(c.ua[:0], h.UserAgent()...)
	c.query = appendForwardedQuery(c.query[:0], x.ctx.URI().QueryString(), d)
	if reg := x.s.reg; reg.HasAffinity() {
		c.names = reg.AffinityHeaders()
		for _, name := range c.names {
			c.named = append(c.named, hashHeader(h, name))
		}
		for _, name := range sessionHeaders {
			if c.session = hashHeader(h, name); c.session != 0 {
				break
			}
		}
	}
	c.on = true
}

// appendHeaders adds the captured client headers to dst.
func (c *clientView) appendHeaders(dst *fasthttp.RequestHeader) {
	for k, v := range c.hdr.All() {
		dst.AddBytesKV(k, v)
	}
}

// hashHeader is the Hash of header name's value in h, or 0 when absent.
func hashHeader(h *fasthttp.RequestHeader, name string) uint64 {
	if v := h.Peek(name); len(v) > 0 {
		return provider.Hash(v)
	}
	return 0
}

// sessionHeaders name a conversation: Claude Code's, then Codex's (it has
// sent both spellings).
var sessionHeaders = [...]string{"X-Claude-Code-Session-Id", "Session-Id", "Session_id"}

// Session names the request's conversation for affinity on p
// (failover.Sessions): p's affinity_header, a client's session header,
// Claude Code's metadata.user_id or Codex's prompt_cache_key; 0 when
// there is none.
func (x *exchange) Session(p *provider.Provider) uint64 {
	c := x.client()
	if name := p.Config.AffinityHeader; name != "" {
		for i, n := range c.names {
			if n == name && c.named[i] != 0 {
				return c.named[i]
			}
		}
	}
	if c.session != 0 {
		return c.session
	}
	if codec.IsObject(x.try.meta) {
		if v := codec.Member(x.try.meta, "user_id"); len(v) > 0 {
			return provider.Hash(v)
		}
	}
	if len(x.try.cacheKey) > 0 {
		return provider.Hash(x.try.cacheKey)
	}
	return 0
}
