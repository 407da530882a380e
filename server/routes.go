package server

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
)

// op is what a route does.
type op uint8

const (
	opGenerate op = iota
	opCountTokens
	opModels
	opHealth
	opReady
	opRoot
	opTelemetry
	opMetrics
)

// route is one entry of the route table.
type route struct {
	method  string
	path    string // exact path; Gemini model routes are matched by geminiRoute
	op      op
	dialect codec.Dialect
}

// routes is the whole route table, read top to bottom.
var routes = [...]route{
	{"POST", "/v1/messages", opGenerate, codec.DialectAnthropic},
	{"POST", "/v1/messages/count_tokens", opCountTokens, codec.DialectAnthropic},
	{"POST", "/v1/chat/completions", opGenerate, codec.DialectChat},
	{"POST", "/v1/responses", opGenerate, codec.DialectResponses},
	{"POST", "/v1/responses/input_tokens", opCountTokens, codec.DialectResponses},
	{"GET", "/v1/models", opModels, codec.DialectChat},
	{"GET", "/v1beta/models", opModels, codec.DialectGemini},
	{"GET", "/healthz", opHealth, codec.DialectUnknown},
	{"HEAD", "/healthz", opHealth, codec.DialectUnknown},
	{"GET", "/readyz", opReady, codec.DialectUnknown},
	{"HEAD", "/readyz", opReady, codec.DialectUnknown},
	{"GET", "/metrics", opMetrics, codec.DialectUnknown},
	{"GET", "/", opRoot, codec.DialectUnknown},
	{"HEAD", "/", opRoot, codec.DialectUnknown},
	{"POST", "/api/event_logging/batch", opTelemetry, codec.DialectUnknown},
}

// Gemini model routes: POST /v1beta/models/{model}:{method}.
var (
	geminiGenerate       = route{"POST", "", opGenerate, codec.DialectGemini}
	geminiCountTokens    = route{"POST", "", opCountTokens, codec.DialectGemini}
	geminiModelsPrefix   = []byte("/v1beta/models/")
	methodGenerate       = []byte("generateContent")
	methodStreamGenerate = []byte("streamGenerateContent")
	methodCountTokens    = []byte("countTokens")
)

// match returns the route for a method and path, and for Gemini routes the
// model and whether the method streams. A nil route is a 404.
func match(method, path []byte) (rt *route, model []byte, stream bool) {
	for i := range routes {
		r := &routes[i]
		if string(path) == r.path && string(method) == r.method {
			return r, nil, false
		}
	}
	rest, ok := bytes.CutPrefix(path, geminiModelsPrefix)
	if !ok || string(method) != "POST" {
		return nil, nil, false
	}
	model, verb, ok := bytes.Cut(rest, []byte{':'})
	if !ok || len(model) == 0 {
		return nil, nil, false
	}
	switch {
	case bytes.Equal(verb, methodGenerate):
		return &geminiGenerate, model, false
	case bytes.Equal(verb, methodStreamGenerate):
		return &geminiGenerate, model, true
	case bytes.Equal(verb, methodCountTokens):
		return &geminiCountTokens, model, false
	}
	return nil, nil, false
}

// allowedMethods lists the methods the routes at path take, for a 405's
// Allow header; "" when no route has that path.
func allowedMethods(path []byte) string {
	allow := ""
	for i := range routes {
		if r := &routes[i]; string(path) == r.path {
			if allow != "" {
				allow += ", "
			}
			allow += r.method
		}
	}
	if allow == "" {
		if _, ok := bytes.CutPrefix(path, geminiModelsPrefix); ok {
			if r, _, _ := match([]byte("POST"), path); r != nil {
				return "POST"
			}
		}
	}
	return allow
}

// dialectOfPath guesses the dialect of a request that matched no route,
// so that even a 404 comes in a shape the client parses.
func dialectOfPath(ctx *fasthttp.RequestCtx) codec.Dialect {
	if d := dialectOfPrefix(pool.B2S(ctx.Path())); d != codec.DialectChat {
		return d
	}
	if len(ctx.Request.Header.Peek("Anthropic-Version")) > 0 {
		return codec.DialectAnthropic
	}
	return codec.DialectChat
}

// dialectOfPrefix is the dialect of the routes under path's prefix; Chat
// (OpenAI's error shape) when none.
func dialectOfPrefix(path string) codec.Dialect {
	switch {
	case strings.HasPrefix(path, "/v1beta"):
		return codec.DialectGemini
	case strings.HasPrefix(path, "/v1/messages"):
		return codec.DialectAnthropic
	case strings.HasPrefix(path, "/v1/responses"):
		return codec.DialectResponses
	}
	return codec.DialectChat
}
