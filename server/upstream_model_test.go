package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestGeminiModelFromAnyDialect: whatever dialect names the model (a
// Chat, Anthropic or Responses body, or the Gemini path), a model that
// cannot be a Gemini URL path segment never reaches a Gemini provider. A
// body's model is not URL-decoded, but it must not carry / or .. either,
// nor bytes JSON escapes (in the path: invalid UTF-8, U+2028), which
// would go up as a backslash.
func TestGeminiModelFromAnyDialect(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`}
	up := newUpstream(t, rec)
	base, _ := startServer(t, upConfig, up.URL)
	bad := func(target, body string) {
		t.Helper()
		n := rec.count()
		status, got := rawPost(t, base, target, body)
		if rec.count() != n {
			uri, _ := rec.last()
			t.Fatalf("%s %s reached the upstream as %q (status %d)", target, body, uri, status)
		}
		if status != 400 || !strings.Contains(got, "invalid model name") {
			t.Fatalf("%s %s: status %d: %s", target, body, status, got)
		}
	}
	chat := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
	}
	bad("/v1/chat/completions", chat("gemini-../../v1/files"))
	bad("/v1/chat/completions", chat(`gemini-\u002e\u002e`))
	bad("/v1/messages", `{"model":"gemini-%2e%2e%2fx","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	bad("/v1/responses", `{"model":"gemini-x/y","input":"hi"}`)
	gem := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	bad("/v1beta/models/gemini-x%E2%80%A8:generateContent", gem)
	bad("/v1beta/models/gemini-x%FF:generateContent", gem)
	// A good name goes up as it came, from a body too.
	status, got := rawPost(t, base, "/v1/chat/completions", chat("gemini-2.5-pro"))
	if uri, _ := rec.last(); status != 200 || uri != "/v1beta/models/gemini-2.5-pro:generateContent" {
		t.Fatalf("status %d %s, upstream %q", status, got, uri)
	}
}

// TestGeminiFailoverSkipsUnsendableModel: a model a Chat provider serves
// first may fail over to a Gemini provider that serves it too; one that
// cannot be a Gemini URL path segment is not sent there: the client gets
// the first provider's failure.
func TestGeminiFailoverSkipsUnsendableModel(t *testing.T) {
	t.Parallel()
	chat := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(500)
		_, _ = io.WriteString(w, `{"error":{"message":"down","type":"server_error"}}`)
	}))
	gem := &uriRecorder{reply: `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`}
	gemUp := newUpstream(t, gem)
	yml := `providers:
  - {name: chat, kind: openai, api: chat, base_url: "` + chat.URL + `/v1", keys: [k1], models: ["m*"]}
  - {name: gem, kind: gemini, base_url: "` + gemUp.URL + `", keys: [k2], models: ["m*"]}
failover: {max_attempts: 3}
timeouts: {keepalive: 0s}
`
	base, _ := startServer(t, yml, "")
	status, got := rawPost(t, base, "/v1/chat/completions", `{"model":"m/../../v1/files","messages":[{"role":"user","content":"hi"}]}`)
	if gem.count() != 0 {
		uri, _ := gem.last()
		t.Fatalf("failover sent the model to the Gemini provider as %q (status %d)", uri, status)
	}
	if status < 500 {
		t.Fatalf("status %d: %s", status, got)
	}
	// A sendable name fails over as before.
	if status, got := rawPost(t, base, "/v1/chat/completions", `{"model":"m-1","messages":[{"role":"user","content":"hi"}]}`); status != 200 || gem.count() != 1 {
		t.Fatalf("status %d, %d Gemini requests: %s", status, gem.count(), got)
	}
}
