package server

import (
	"strings"
	"testing"
)

const forwardConfig = `
keys:
  - {name: dev, key: good-key}
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
  - {name: chat, kind: openai, api: chat, base_url: "${UP}/v1", keys: [k], models: ["gpt-*"]}
  - {name: gem, kind: gemini, base_url: "${UP}", keys: [k], models: ["gemini-*"]}
forward_headers: [X-Team, "X-Trace-*"]
timeouts:
  keepalive: 0s
`

// TestClientHeadersForwardedByAllowList: only the headers each upstream
// API defines (and the operator's forward_headers) reach the provider;
// cookies, a second credential (Api-Key), Expect, proxy and browser
// headers and arbitrary ones do not. Api-Key authenticates like
// x-api-key.
func TestClientHeadersForwardedByAllowList(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, forwardConfig, up.URL)
	never := []string{
		"Cookie", "session=local-app", "Api-Key", "good-key", "X-Forwarded-For", "10.0.0.1",
		"X-Forwarded-Host", "evil.example", "Forwarded", "for=10.0.0.1", "Referer", "http://localhost:3000/",
		"X-Foo", "bar", "Sec-Fetch-Site", "cross-site", "X-Real-Ip", "10.0.0.1",
	}
	f := func(path, body string, kept, dropped []string) {
		t.Helper()
		hs := append(append(append([]string{}, never...), kept...), dropped...)
		status, _, b := post(t, base+path, body, hs...)
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, b)
		}
		_, _, h := rec.last()
		for i := 0; i+1 < len(never); i += 2 {
			if v := h.Get(never[i]); v != "" {
				t.Errorf("%s: %s reached the upstream: %q", path, never[i], v)
			}
		}
		for i := 0; i+1 < len(dropped); i += 2 {
			if v := h.Get(dropped[i]); v != "" {
				t.Errorf("%s: %s reached the upstream: %q", path, dropped[i], v)
			}
		}
		for i := 0; i+1 < len(kept); i += 2 {
			if v := h.Get(kept[i]); v != kept[i+1] {
				t.Errorf("%s: %s = %q upstream, want %q", path, kept[i], v, kept[i+1])
			}
		}
	}
	common := []string{"User-Agent", "my-sdk/1.0", "X-Stainless-Os", "Linux", "X-Team", "blue", "X-Trace-Id", "t-1"}
	f("/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`,
		append([]string{"Anthropic-Beta", "a,b", "Anthropic-Version", "2023-06-01"}, common...),
		[]string{"OpenAI-Beta", "assistants=v2", "X-Goog-Api-Client", "genai-js"})
	rec.reply = `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
	f("/v1/chat/completions", `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}`,
		append([]string{"OpenAI-Beta", "assistants=v2", "OpenAI-Organization", "org-1"}, common...),
		[]string{"Anthropic-Beta", "a,b", "X-Goog-Api-Client", "genai-js"})
	rec.reply = `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`
	f("/v1beta/models/gemini-x:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		append([]string{"X-Goog-Api-Client", "genai-js"}, common...),
		[]string{"Anthropic-Beta", "a,b", "OpenAI-Beta", "assistants=v2"})
	if status, _, _ := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`, "Api-Key", "wrong"); status != 401 {
		t.Fatalf("a wrong Api-Key: %d, want 401", status)
	}
}

// TestWSTunnelledHeadersFollowTheAllowList: a WebSocket frame's
// client_metadata.ws_request_header_* becomes a header only when the
// dialect's list (or forward_headers) names it.
func TestWSTunnelledHeadersFollowTheAllowList(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, _ := wsServer(t, u, "forward_headers: [X-Team]\n")
	c, _ := wsDial(t, base, "/v1/responses", "Cookie", "session=local-app")
	wsSend(t, c, frameJSON("["+userHi+"]", "", `"client_metadata":{"ws_request_header_x_foo":"bar","ws_request_header_cookie":"a=b","ws_request_header_x_forwarded_for":"10.0.0.1","ws_request_header_x_team":"blue","ws_request_header_x_openai_internal_codex_responses_lite":"true"}`))
	wsResponse(t, c)
	_, h := u.request(t, 0)
	for _, k := range []string{"X-Foo", "Cookie", "X-Forwarded-For"} {
		if v := h.Get(k); v != "" {
			t.Errorf("%s reached the upstream: %q", k, v)
		}
	}
	if h.Get("X-Team") != "blue" || h.Get("X-Openai-Internal-Codex-Responses-Lite") != "true" {
		t.Errorf("listed headers missing upstream: %v", h)
	}
}

// TestTranslatedUserAgent: a translated request names slipstream and its
// version, then the client's own User-Agent in parentheses (clipped and
// stripped of anything that could break the header); a same-dialect
// request keeps the client's as it is.
func TestTranslatedUserAgent(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, forwardConfig, up.URL)
	f := func(path, body, ua, want string) {
		t.Helper()
		status, _, b := post(t, base+path, body, "User-Agent", ua, "Api-Key", "good-key")
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, b)
		}
		_, _, h := rec.last()
		if got := h.Get("User-Agent"); got != want {
			t.Errorf("%s with User-Agent %.80q: upstream got %.300q, want %.300q", path, ua, got, want)
		}
		if n := len(h.Values("User-Agent")); n != 1 {
			t.Errorf("%s: %d User-Agent headers upstream", path, n)
		}
	}
	chat := `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`
	gem := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	f("/v1/chat/completions", chat, "my-client/1.0", "slipstream/dev (my-client/1.0)")
	f("/v1beta/models/claude-x:generateContent", gem, "GeminiCLI/0.61.0 (linux; x64)", "slipstream/dev (GeminiCLI/0.61.0 (linux; x64))")
	f("/v1/chat/completions", chat, "", "slipstream/dev")
	f("/v1/chat/completions", chat, "  \t ", "slipstream/dev")
	// A tab becomes a space, an unbalanced parenthesis is escaped or
	// closed, a long one is clipped.
	f("/v1/chat/completions", chat, "a\tb) (c", `slipstream/dev (a b\) (c))`)
	long := strings.Repeat("x", 1000)
	f("/v1/chat/completions", chat, long, "slipstream/dev ("+long[:256]+")")
	// Same dialect: the client's, unchanged.
	f("/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`, "my-client/1.0", "my-client/1.0")
}
