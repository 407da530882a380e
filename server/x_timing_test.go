package server

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"syscall"
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

// benchRaw sends req over one connection b.N times. Besides ns/op it
// reports cpu-ns/op, the process's CPU time (user and system: client,
// proxy and stub upstream together) per request, which on a busy machine
// compares two builds more steadily than elapsed time does.
func benchRaw(b *testing.B, base string, req []byte, size int) {
	rc := dialRaw(b, base)
	rc.do(b, req)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if status, _ := rc.do(b, req); status != 200 {
			b.Fatalf("status %d", status)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkProxyStream streams the 10.8 KB Claude-Code-shaped request's
// answer, 20 text deltas that arrive in one read (make bench's stream
// workload), from an Anthropic upstream (same dialect), the same with the
// default guardrails on, and from a Chat upstream (translated).
func BenchmarkProxyStream(b *testing.B) {
	body, err := os.ReadFile("testdata/claude_code_10k.json")
	if err != nil {
		b.Fatal(err)
	}
	req := rawRequest("/v1/messages", body)
	for _, tc := range []struct{ name, kind, reply, extra string }{
		{"same_dialect_anthropic", "kind: anthropic", anthropicStream(20), ""},
		{"same_dialect_anthropic_guardrails", "kind: anthropic", anthropicStream(20), "guardrails: {enabled: true}\n"},
		{"to_chat", "kind: openai, api: chat", chatStream(20), ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			up := rawUpstream(b, httpReply("text/event-stream", tc.reply))
			yml := "providers:\n  - {name: p, " + tc.kind + ", base_url: \"${UP}\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n" + tc.extra
			base, _ := startServer(b, yml, up)
			benchRaw(b, base, req, len(body))
		})
	}
}

// anthropicStream is an Anthropic message stream of n text deltas with
// usage, as the API sends it.
func anthropicStream(n int) string {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":2900,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %d of the answer \"}}\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":80}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}

// chatStream is a Chat Completions stream of n content chunks, a finish
// chunk and a usage chunk.
func chatStream(n int) string {
	var b strings.Builder
	const head = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[`
	for i := range n {
		fmt.Fprintf(&b, head+`{"index":0,"delta":{"content":"word %d of the answer "},"finish_reason":null}]}`+"\n\n", i)
	}
	b.WriteString(head + `{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(head + `],"usage":{"prompt_tokens":2900,"completion_tokens":80,"total_tokens":2980}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
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
