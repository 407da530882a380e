package server

import (
	"bytes"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/pool"
	"slipstream/server/provider"
	"slipstream/tokenize"
)

// Per-request overheads of a local count (docs/TOKENS.md): each message
// costs its role and delimiters, each tool its framing, and each image a
// fixed estimate, since image sizes are not decoded.
const (
	tokensPerMessage = 3
	tokensPerReply   = 3
	tokensPerTool    = 8
	tokensPerImage   = 765
)

// countTokens answers POST /v1/messages/count_tokens, POST
// /v1/responses/input_tokens and Gemini :countTokens with a local count
// over the request in neutral form. For Claude and Gemini models the count
// is an o200k estimate. Like every request it passed max_bytes_in_flight
// (handle), and it counts against its key's rpm before anything is
// counted (admitCount). It reports whether x was handed off.
func (s *Server) countTokens(x *exchange) bool {
	ctx, d := x.ctx, x.rt.dialect
	body := x.body
	if !x.readTop() {
		return false
	}
	x.stream = false // a count answers once
	if d == codec.DialectGemini {
		if !x.checkPathModel() {
			return false
		}
		x.model = x.geminiModel
	}
	if !x.key.Allows(pool.B2S(x.model)) {
		s.writeError(ctx, d, fasthttp.StatusForbidden, "this API key may not use model "+clipString(x.model))
		return false
	}
	if !x.admitCount() {
		return false
	}
	if t, ok := s.reg.Resolve(pool.B2S(x.model), d); ok && countsUpstream(t, d) {
		x.target, x.upModel = t, x.model
		if t.Aliased {
			x.upModel = pool.S2B(t.Model)
		}
		x.counting = true
		if !x.checkUpModel() || !x.guardFront() {
			return false
		}
		return s.forwardSame(x)
	}
	s.countLocally(x, body)
	return false
}

// localCounts counts the count requests answered with a local count
// (tests assert on the work done).
var localCounts atomic.Int64

// countsUpstream reports whether a count request goes to the provider:
// count_tokens: upstream is set and the provider speaks the client's
// dialect (a count is not translated; other cases count locally).
func countsUpstream(t provider.Target, d codec.Dialect) bool {
	return t.Provider.Config.CountTokens == "upstream" && t.Provider.Dialect == d
}

// countLocally answers with the local count of the request in neutral form.
func (s *Server) countLocally(x *exchange, body []byte) {
	ctx, d := x.ctx, x.rt.dialect
	if d == codec.DialectGemini {
		if inner := codec.Get(body, "generateContentRequest"); inner.IsObject() {
			body = codec.Raw(inner)
		}
	}
	if err := translate.DecodeRequest(d, &x.req, body); err != nil {
		s.writeError(ctx, d, fasthttp.StatusBadRequest, "cannot read request: "+err.Error())
		return
	}
	n := countRequest(x.encoding(), &x.req, &x.spans)
	localCounts.Add(1)
	out := pool.Get(128)
	switch d {
	case codec.DialectAnthropic:
		out.B = append(out.B, `{"input_tokens":`...)
	case codec.DialectGemini:
		out.B = append(out.B, `{"totalTokens":`...)
	default:
		out.B = append(out.B, `{"object":"response.input_tokens","input_tokens":`...)
	}
	out.B = codec.AppendInt(out.B, int64(n))
	out.B = append(out.B, '}')
	ctx.SetContentType("application/json")
	ctx.SetBody(out.B)
	pool.Put(out)
}

// countRequest counts every text span of r: system, message parts, tool
// calls and results, and tool definitions. scratch holds unescaped spans;
// it is reused, so a warm caller counts without allocating.
func countRequest(enc *tokenize.Encoding, r *codec.Request, scratch *[]byte) int {
	c := spanCounter{enc: enc, buf: scratch}
	n := tokensPerReply
	for _, s := range r.System {
		n += c.text(s)
	}
	if len(r.System) > 0 {
		n += tokensPerMessage
	}
	n += len(r.Messages) * tokensPerMessage
	for i := range r.Parts {
		n += c.part(&r.Parts[i])
	}
	for i := range r.Tools {
		t := &r.Tools[i]
		n += tokensPerTool + c.text(t.Name) + c.text(t.Description) + c.raw(t.Schema)
	}
	return n
}

// spanCounter counts escaped JSON string content after unescaping it into
// a reused buffer, so counts match what the model reads.
type spanCounter struct {
	enc *tokenize.Encoding
	buf *[]byte
}

func (c *spanCounter) text(esc []byte) int {
	if len(esc) == 0 {
		return 0
	}
	if bytes.IndexByte(esc, '\\') < 0 {
		return c.enc.Count(esc) // nothing to unescape
	}
	var err error
	*c.buf, err = codec.AppendUnescaped((*c.buf)[:0], esc)
	if err != nil {
		return c.enc.Count(esc)
	}
	return c.enc.Count(*c.buf)
}

func (c *spanCounter) raw(v []byte) int { return c.enc.Count(v) }

func (c *spanCounter) part(p *codec.Part) int {
	switch p.Kind {
	case codec.PartImage:
		return tokensPerImage
	case codec.PartToolCall:
		n := c.text(p.Name) + c.text(p.ID)
		if p.ArgsString && len(p.Args) >= 2 {
			return n + c.text(p.Args[1:len(p.Args)-1])
		}
		return n + c.raw(p.Args)
	case codec.PartToolResult:
		return c.text(p.ID)
	case codec.PartRedactedThinking:
		return 0
	}
	return c.text(p.Text)
}
