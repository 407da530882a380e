package server

import (
	"slipstream/codec"
	"slipstream/server/config"
	"slipstream/server/upstream"
)

// forwardLists are the client headers each dialect forwards upstream (on
// the same-dialect path, HTTP and WebSocket frames alike): the upstream
// API's own (server/upstream/headers.go) and the operator's
// forward_headers. Indexed by codec.Dialect.
type forwardLists [codec.DialectGemini + 1]*upstream.ForwardList

func newForwardLists(cfg *config.Config) forwardLists {
	extra := cfg.ForwardHeaders
	var f forwardLists
	f[codec.DialectUnknown] = upstream.NewForwardList(upstream.CommonHeaders, extra)
	f[codec.DialectAnthropic] = upstream.NewForwardList(upstream.CommonHeaders, upstream.AnthropicHeaders, extra)
	f[codec.DialectChat] = upstream.NewForwardList(upstream.CommonHeaders, upstream.OpenAIHeaders, extra)
	f[codec.DialectResponses] = f[codec.DialectChat]
	f[codec.DialectGemini] = upstream.NewForwardList(upstream.CommonHeaders, upstream.GeminiHeaders, extra)
	return f
}
