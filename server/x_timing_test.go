package server

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"testing"
	"time"
)

// BenchmarkProxySameDialect measures one 10.8 KB same-dialect request
// through slipstream to a stub upstream over loopback, and the same through
// net/http/httputil.ReverseProxy as the baseline, in one run.
func BenchmarkProxySameDialect(b *testing.B) {
	up := rawUpstream(b, httpReply("application/json", chatReply))
	body := chatBody(10_800, false)
	req := rawRequest("/v1/chat/completions", body)

	b.Run("slipstream", func(b *testing.B) {
		yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
		base, _ := startServer(b, yml, up)
		benchRaw(b, base, req, len(body))
	})
	b.Run("httputil.ReverseProxy", func(b *testing.B) {
		target, _ := url.Parse(up)
		rp := httputil.NewSingleHostReverseProxy(target)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: rp}
		go srv.Serve(ln)
		b.Cleanup(func() { srv.Close() })
		benchRaw(b, "http://"+ln.Addr().String(), req, len(body))
	})
}

func benchRaw(b *testing.B, base string, req []byte, size int) {
	rc := dialRaw(b, base)
	rc.do(b, req)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if status, _ := rc.do(b, req); status != 200 {
			b.Fatalf("status %d", status)
		}
	}
}

// BenchmarkProxyTranslated sends the 10.8 KB Claude-Code-shaped request
// (testdata/claude_code_10k.json: 3 system blocks, 20 tools, three tool
// turns with thinking) from an Anthropic client to an Anthropic upstream
// (same dialect) and to Chat and Responses upstreams (translated), in one
// run, so the cost of translation is read as a ratio.
func BenchmarkProxyTranslated(b *testing.B) {
	body, err := os.ReadFile("testdata/claude_code_10k.json")
	if err != nil {
		b.Fatal(err)
	}
	body = bytes.Replace(body, []byte(`"stream":true`), []byte(`"stream":false`), 1)
	req := rawRequest("/v1/messages", body)
	for _, tc := range []struct{ name, kind, reply string }{
		{"same_dialect_anthropic", "kind: anthropic", anthropicReply},
		{"to_chat", "kind: openai, api: chat", chatReply},
		{"to_responses", "kind: openai, api: responses", responsesReply},
	} {
		b.Run(tc.name, func(b *testing.B) {
			up := rawUpstream(b, httpReply("application/json", tc.reply))
			yml := "providers:\n  - {name: p, " + tc.kind + ", base_url: \"${UP}\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
			base, _ := startServer(b, yml, up)
			benchRaw(b, base, req, len(body))
		})
	}
}

// BenchmarkRoutingDecision measures the routing decision of one request:
// the key check (constant-time against every key, one of them a digest,
// so a SHA-256 of the presented key), its rpm/tpm/budget check, model
// resolution and the credential pick (with and without affinity). The
// issue's budget is under 1 us and 0 allocations.
func BenchmarkRoutingDecision(b *testing.B) {
	s := routingServer(b)
	key := []byte("sk-client-a")
	now := time.Now()
	for _, session := range []uint64{0, 42} {
		name := "round_robin"
		if session != 0 {
			name = "affinity"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if routeOnce(s, key, "claude-sonnet-5", session, now) == nil {
					b.Fatal("no credential")
				}
			}
		})
	}
}
