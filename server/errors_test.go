package server

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

const errConfig = `
keys:
  - name: t
    key: good-key
    models: ["claude-*", "gpt-*", "slow*", "gemini-*", "mock*"]
providers:
  - name: anth
    kind: anthropic
    base_url: ${UP}
    keys: ["k"]
    models: ["claude-*", "forbidden-*"]
  - name: chat
    kind: openai
    base_url: ${UP}/v1
    keys: ["k"]
    models: ["gpt-*"]
  - name: slow
    kind: openai
    base_url: ${UP}/slow
    keys: ["k"]
    models: ["slow*"]
limits:
  max_body_bytes: 4096
  max_concurrent: 1
timeouts:
  first_byte: 300ms
  keepalive: 0s
`

// checkShape asserts the error body is in the dialect's shape.
func checkShape(t *testing.T, dialect string, body []byte) {
	t.Helper()
	s := string(body)
	switch dialect {
	case "anthropic":
		if gjson.Get(s, "type").Str != "error" || gjson.Get(s, "error.type").Str == "" || gjson.Get(s, "error.message").Str == "" {
			t.Fatalf("not an Anthropic error: %s", s)
		}
	case "openai":
		if gjson.Get(s, "error.type").Str == "" || gjson.Get(s, "error.message").Str == "" || !gjson.Get(s, "error.param").Exists() {
			t.Fatalf("not an OpenAI error: %s", s)
		}
	case "gemini":
		if gjson.Get(s, "error.code").Int() == 0 || gjson.Get(s, "error.status").Str == "" {
			t.Fatalf("not a Google error: %s", s)
		}
	}
}

func TestErrorStatusesInDialectShape(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow") {
			time.Sleep(time.Second)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	base, _ := startServer(t, errConfig, up.URL)
	auth := []string{"X-Api-Key", "good-key"}
	f := func(dialect, path, body string, wantStatus int, wantType string, headers ...string) {
		t.Helper()
		if headers == nil {
			headers = auth
		}
		status, _, got := post(t, base+path, body, headers...)
		if status != wantStatus {
			t.Fatalf("%s %s: status %d, want %d: %s", path, clipT([]byte(body)), status, wantStatus, got)
		}
		if status != 200 {
			checkShape(t, dialect, got)
		}
		if wantType != "" && !strings.Contains(string(got), wantType) {
			t.Fatalf("%s: %s lacks %q", path, got, wantType)
		}
	}
	f("anthropic", "/v1/messages", `{"model":`, 400, "invalid_request_error")
	f("openai", "/v1/chat/completions", `not json`, 400, "invalid_request_error")
	f("anthropic", "/v1/messages", `{"max_tokens":1}`, 400, "missing model")
	f("openai", "/v1/responses", `{"input":"x"}`, 400, "missing model")
	f("anthropic", "/v1/messages", `{"model":"claude-x"}`, 401, "authentication_error", "X-Api-Key", "bad")
	f("openai", "/v1/chat/completions", `{"model":"gpt-4"}`, 401, "invalid_api_key", "Authorization", "Bearer nope")
	f("anthropic", "/v1/messages", `{"model":"forbidden-x"}`, 403, "permission_error")
	f("openai", "/v1/chat/completions", `{"model":"gpt-unknown-but-allowed","messages":[]}`, 200, "")
	f("openai", "/v1/chat/completions", `{"model":"mock-1","messages":[]}`, 404, "model_not_found")
	f("anthropic", "/v1/messages", `{"model":"claude-x","pad":"`+strings.Repeat("x", 5000)+`"}`, 413, "request_too_large")
	f("gemini", "/v1beta/models/gemini-x:generateContent", `{"contents":[]}`, 404, "NOT_FOUND")
	f("openai", "/v1/nothing-here", `{}`, 404, "")
	f("openai", "/v1/chat/completions", `{"model":"slow-1","messages":[]}`, 504, "timed out")
}

func TestUnreachableUpstreamIs502(t *testing.T) {
	t.Parallel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	base, _ := startServer(t, errConfig, dead)
	status, _, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`, "X-Api-Key", "good-key")
	if status != 502 {
		t.Fatalf("status %d: %s", status, got)
	}
	checkShape(t, "anthropic", got)
}

func TestOverConcurrencyIs429(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-release
		w.Write([]byte(`{}`))
	}))
	yml := strings.Replace(errConfig, "first_byte: 300ms", "first_byte: 5s", 1)
	base, _ := startServer(t, yml, up.URL)
	done := make(chan int)
	go func() {
		status, _, _ := post(t, base+"/v1/chat/completions", `{"model":"gpt-4","messages":[]}`, "X-Api-Key", "good-key")
		done <- status
	}()
	select { // the first request holds the only slot
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request never reached the upstream")
	}
	status, hdr, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`, "X-Api-Key", "good-key")
	close(release)
	if status != 429 || hdr.Get("Retry-After") == "" {
		t.Fatalf("status %d (Retry-After %q): %s", status, hdr.Get("Retry-After"), got)
	}
	checkShape(t, "anthropic", got)
	if first := <-done; first != 200 {
		t.Fatalf("first request: %d", first)
	}
}
