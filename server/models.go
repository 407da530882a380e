package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
)

// modelsDialect picks the shape of GET /v1/models: Anthropic's when the
// request carries anthropic-version or x-api-key, else OpenAI's; Gemini's
// on /v1beta/models.
func (s *Server) modelsDialect(ctx *fasthttp.RequestCtx, rt *route) codec.Dialect {
	if rt.dialect == codec.DialectGemini {
		return codec.DialectGemini
	}
	h := &ctx.Request.Header
	if len(h.Peek("Anthropic-Version")) > 0 || len(h.Peek("X-Api-Key")) > 0 {
		return codec.DialectAnthropic
	}
	return codec.DialectChat
}

// modelIDs lists the model names a client holding key can ask for
// (provider.Registry.List): never a pattern.
func (s *Server) modelIDs(key *clientKey) []string {
	var allow func(string) bool
	if key != nil {
		allow = key.Allows
	}
	return s.reg.List(s.lists.get, allow)
}

// handleModels answers a model list in the dialect's shape
// (https://platform.openai.com/docs/api-reference/models/list,
// https://docs.anthropic.com/en/api/models-list, https://ai.google.dev/api/models).
func (s *Server) handleModels(ctx *fasthttp.RequestCtx, d codec.Dialect, key *clientKey) {
	ids := s.modelIDs(key)
	buf := pool.Get(1024)
	b := buf.B[:0]
	switch d {
	case codec.DialectAnthropic:
		b = append(b, `{"data":[`...)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":"model","id":`...)
			b = codec.AppendQuotedString(b, id)
			b = append(b, `,"display_name":`...)
			b = codec.AppendQuotedString(b, id)
			b = append(b, `,"created_at":"2026-01-01T00:00:00Z"}`...)
		}
		b = append(b, `],"has_more":false,"first_id":`...)
		b = appendFirstLast(b, ids, 0)
		b = append(b, `,"last_id":`...)
		b = appendFirstLast(b, ids, len(ids)-1)
		b = append(b, '}')
	case codec.DialectGemini:
		b = append(b, `{"models":[`...)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = codec.AppendQuotedString(b, "models/"+id)
			b = append(b, `,"displayName":`...)
			b = codec.AppendQuotedString(b, id)
			b = append(b, `,"supportedGenerationMethods":["generateContent","countTokens"]}`...)
		}
		b = append(b, `]}`...)
	default:
		b = append(b, `{"object":"list","data":[`...)
		for i, id := range ids {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = codec.AppendQuotedString(b, id)
			b = append(b, `,"object":"model","created":1767225600,"owned_by":"slipstream"}`...)
		}
		b = append(b, `]}`...)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
	buf.B = b
	pool.Put(buf)
}

func appendFirstLast(b []byte, ids []string, i int) []byte {
	if i < 0 || i >= len(ids) {
		return append(b, "null"...)
	}
	return codec.AppendQuotedString(b, ids[i])
}
