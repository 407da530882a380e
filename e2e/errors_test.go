package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUpstreamErrorsAcrossDialects: an upstream error before the first
// byte reaches the client in the client's dialect, keeping the status
// class, the mapped type, retry-after, and the context-length signal each
// CLI reacts to (docs/TRANSLATION.md, errors).
func TestUpstreamErrorsAcrossDialects(t *testing.T) {
	t.Parallel()
	type tc struct {
		name       string
		up         struct{ kind, api, dialect string }
		status     int
		body       string
		header     map[string]string
		route      string // client path
		req        string // client body
		wantStatus int    // 0: any 5xx
		check      func(t *testing.T, h http.Header, body map[string]any)
	}
	chatUp := struct{ kind, api, dialect string }{"openai", "chat", dialectChat}
	anthUp := struct{ kind, api, dialect string }{"anthropic", "", dialectAnthropic}
	gemUp := struct{ kind, api, dialect string }{"gemini", "", dialectGemini}
	const anthReq = `{"model":"m-e2e","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	const respReq = `{"model":"m-e2e","stream":true,"input":"hi"}`
	const chatReq = `{"model":"m-e2e","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	anthType := func(want string) func(t *testing.T, h http.Header, b map[string]any) {
		return func(t *testing.T, h http.Header, b map[string]any) {
			if asString(b["type"]) != "error" || asString(asMap(b["error"])["type"]) != want {
				t.Errorf("body = %v, want {type: error, error: {type: %s}}", b, want)
			}
		}
	}
	cases := []tc{
		{
			name: "chat_429_to_anthropic", up: chatUp, status: 429,
			body:   `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			header: map[string]string{"Retry-After": "7"},
			route:  "/v1/messages", req: anthReq, wantStatus: 429,
			check: func(t *testing.T, h http.Header, b map[string]any) {
				anthType("rate_limit_error")(t, h, b)
				if h.Get("Retry-After") != "7" {
					t.Errorf("retry-after = %q, want 7", h.Get("Retry-After"))
				}
			},
		},
		{
			name: "chat_context_length_to_anthropic", up: chatUp, status: 400,
			body:  `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			route: "/v1/messages", req: anthReq, wantStatus: 400,
			check: func(t *testing.T, h http.Header, b map[string]any) {
				anthType("invalid_request_error")(t, h, b)
				if msg := asString(asMap(b["error"])["message"]); !strings.Contains(msg, "prompt is too long") {
					t.Errorf("message = %q, want Claude Code's \"prompt is too long\" text", msg)
				}
			},
		},
		{
			name: "anthropic_529_to_responses", up: anthUp, status: 529,
			body:  `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			route: "/v1/responses", req: respReq,
			check: func(t *testing.T, h http.Header, b map[string]any) {
				if asMap(b["error"]) == nil || asString(asMap(b["error"])["message"]) == "" {
					t.Errorf("body = %v, want an OpenAI {error: {message, type}}", b)
				}
			},
		},
		{
			name: "anthropic_context_length_to_responses", up: anthUp, status: 400,
			body:  `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`,
			route: "/v1/responses", req: respReq, wantStatus: 400,
			check: func(t *testing.T, h http.Header, b map[string]any) {
				if c := asString(asMap(b["error"])["code"]); c != "context_length_exceeded" {
					t.Errorf("error.code = %q, want context_length_exceeded (Codex keys on it); body %v", c, b)
				}
			},
		},
		{
			name: "gemini_429_to_chat", up: gemUp, status: 429,
			body:  `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`,
			route: "/v1/chat/completions", req: chatReq, wantStatus: 429,
			check: func(t *testing.T, h http.Header, b map[string]any) {
				if asMap(b["error"]) == nil || asString(asMap(b["error"])["message"]) == "" {
					t.Errorf("body = %v, want an OpenAI {error: {message, type}}", b)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStub(t, c.up.dialect, func(r *stubReq) stubAnswer {
				return stubAnswer{Status: c.status, Body: c.body, Header: c.header}
			})
			p := startSlipstream(t, upstreamConfig(c.up.kind, c.up.api, s.BaseURL()))
			req, _ := http.NewRequest("POST", p.URL+c.route, strings.NewReader(c.req))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testKey)
			req.Header.Set("anthropic-version", "2023-06-01")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("status %d, content-type %q, body not JSON: %s", resp.StatusCode, resp.Header.Get("Content-Type"), clip(raw, 1000))
			}
			if c.wantStatus != 0 && resp.StatusCode != c.wantStatus || c.wantStatus == 0 && resp.StatusCode < 500 {
				t.Errorf("status = %d, want %d (5xx when 0); body %s", resp.StatusCode, c.wantStatus, clip(raw, 1000))
			}
			c.check(t, resp.Header, body)
		})
	}
}
