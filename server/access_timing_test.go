package server

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkProxyAccessLog is BenchmarkProxySameDialect's request with the
// access log off and on (text and JSON, to io.Discard), to read what one
// log line costs.
func BenchmarkProxyAccessLog(b *testing.B) {
	up := rawUpstream(b, httpReply("application/json", chatReply))
	body := chatBody(10_800, false)
	req := rawRequest("/v1/chat/completions", body)
	for _, tc := range []struct{ name, log string }{
		{"off", ""},
		{"text", "log: {access: true}\n"},
		{"json", "log: {access: true, format: json}\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n" + tc.log
			cfg := parseConfig(b, strings.ReplaceAll(yml, "${UP}", up), "")
			base := serveConfig(b, cfg, io.Discard)
			benchRaw(b, base, req, len(body))
		})
	}
}
