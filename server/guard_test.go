package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"slipstream/guard/guardtest"
	"slipstream/internal/testkit"
)

// guardrailsConfig serves claude-* from an Anthropic upstream, gpt-* from a
// Chat upstream (translated for an Anthropic client) and local-* from a
// provider no guardrail applies to; private keys are blocked.
const guardrailsConfig = `
keys:
  - {name: dev, key: good-key}
  - {name: trusted, key: trusted-key}
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
  - {name: chat, kind: openai, api: chat, base_url: "${UP}/v1", keys: [k], models: ["gpt-*"]}
  - {name: local, kind: anthropic, base_url: "${UP}", keys: [k], models: ["local-*"], count_tokens: upstream}
guardrails:
  rules:
    private_key: block
  policies:
    - {providers: [local], rules: {"*": off}}
timeouts:
  keepalive: 0s
`

// secretOf is a generated secret of rule (never a real one).
func secretOf(t *testing.T, rule string) string {
	t.Helper()
	for _, s := range guardtest.Secrets(7, 1) {
		if s.Rule == rule {
			return s.Value
		}
	}
	t.Fatalf("the corpus has no %s", rule)
	return ""
}

// toolResultBody is an Anthropic request whose tool result holds text,
// as a coding agent sends after reading a file.
func toolResultBody(model, text string) string {
	b, _ := json.Marshal(map[string]any{
		"model": model, "max_tokens": 100,
		"messages": []any{
			map[string]any{"role": "user", "content": "read .env"},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": map[string]any{"file_path": ".env"}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}}},
		},
	})
	return string(b)
}

var placeholderRE = regexp.MustCompile(`\[REDACTED:([a-z0-9_]+):([0-9a-f]{6})\]`)

// TestGuardRedactsSameDialect: a secret in a tool result never reaches
// the provider; the provider gets a placeholder naming the rule, the same
// one for the same secret every time, and a different one for another.
// A request without a match reaches it byte for byte.
func TestGuardRedactsSameDialect(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, guardrailsConfig, up.URL)
	key, other := secretOf(t, "aws_access_key_id"), secretOf(t, "github_token")
	body := toolResultBody("claude-sonnet-4-5", "AWS_ACCESS_KEY_ID="+key+"\nGITHUB_TOKEN="+other+"\nagain: "+key)
	status, _, out := post(t, base+"/v1/messages", body, "x-api-key", "good-key")
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	got, _, _ := rec.last()
	if bytes.Contains(got, []byte(key)) || bytes.Contains(got, []byte(other)) {
		t.Fatalf("the provider received a secret: %s", got)
	}
	ph := placeholderRE.FindAllStringSubmatch(string(got), -1)
	if len(ph) != 3 || ph[0][1] != "aws_access_key_id" || ph[1][1] != "github_token" || ph[0][0] != ph[2][0] || ph[0][2] == ph[1][2] {
		t.Fatalf("placeholders %q in %s", ph, got)
	}
	if !json.Valid(got) {
		t.Fatalf("the redacted body is not JSON: %s", got)
	}
	clean := toolResultBody("claude-sonnet-4-5", "PORT=8080\nHOST=localhost\n")
	post(t, base+"/v1/messages", clean, "x-api-key", "good-key")
	got, _, _ = rec.last()
	mustEqual(t, "a body without a match", got, []byte(clean))
}

// TestGuardRedactsTranslated: the translated path sends the redacted
// content too (the translation reads the redacted body).
func TestGuardRedactsTranslated(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: chatReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, guardrailsConfig, up.URL)
	key := secretOf(t, "openai_api_key")
	status, _, out := post(t, base+"/v1/messages", toolResultBody("gpt-4.1", "OPENAI_API_KEY="+key), "x-api-key", "good-key")
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	got, path, _ := rec.last()
	if path != "/v1/chat/completions" || bytes.Contains(got, []byte(key)) || !placeholderRE.Match(got) {
		t.Fatalf("%s received %s", path, got)
	}
}

// TestGuardBlocks: a blocked rule refuses the request with 400 in the
// client's dialect naming the rule, never the value; nothing reaches the
// provider.
func TestGuardBlocks(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, guardrailsConfig, up.URL)
	pem := secretOf(t, "private_key")
	status, _, out := post(t, base+"/v1/messages", toolResultBody("claude-sonnet-4-5", pem), "x-api-key", "good-key")
	if status != 400 || !bytes.Contains(out, []byte(`"type":"error"`)) || !bytes.Contains(out, []byte("private_key")) {
		t.Fatalf("status %d: %s", status, out)
	}
	line := strings.SplitN(pem, "\n", 3)[1]
	if bytes.Contains(out, []byte(line[:20])) {
		t.Fatalf("the refusal quotes the key: %s", out)
	}
	if got, _, _ := rec.last(); got != nil {
		t.Fatalf("the provider received %s", got)
	}
}

// TestGuardPolicyPerProvider: a policy turns every rule off for the
// local provider, which gets the content as sent, count requests
// included; the same key's requests to an external provider are
// redacted.
func TestGuardPolicyPerProvider(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, guardrailsConfig, up.URL)
	key := secretOf(t, "stripe_live_key")
	body := toolResultBody("local-llama", "STRIPE="+key)
	post(t, base+"/v1/messages", body, "x-api-key", "good-key")
	got, _, _ := rec.last()
	mustEqual(t, "the local provider's body", got, []byte(body))
	post(t, base+"/v1/messages", toolResultBody("claude-sonnet-4-5", "STRIPE="+key), "x-api-key", "good-key")
	if got, _, _ = rec.last(); bytes.Contains(got, []byte(key)) {
		t.Fatalf("the external provider received the secret: %s", got)
	}
}

// TestGuardCountTokensUpstream: a count request forwarded to the
// provider is guarded like a generation.
func TestGuardCountTokensUpstream(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: `{"input_tokens":12}`}
	up := newUpstream(t, rec)
	cfg := strings.Replace(guardrailsConfig, `models: ["claude-*"]}`, `models: ["claude-*"], count_tokens: upstream}`, 1)
	base, _ := startServer(t, cfg, up.URL)
	key := secretOf(t, "anthropic_api_key")
	status, _, out := post(t, base+"/v1/messages/count_tokens", toolResultBody("claude-sonnet-4-5", key), "x-api-key", "good-key")
	got, path, _ := rec.last()
	if status != 200 || path != "/v1/messages/count_tokens" || bytes.Contains(got, []byte(key)) || !placeholderRE.Match(got) {
		t.Fatalf("status %d %s; %s received %s", status, out, path, got)
	}
}

// TestGuardFailoverReguards: a request first sent to a provider no rule
// applies to, failing over to one under the default rules, reaches the
// second redacted: the failover checks the client's body again.
func TestGuardFailoverReguards(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var local, external []byte
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("X-Api-Key") == "klocal" {
			local = b.Bytes()
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`))
			return
		}
		external = b.Bytes()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(anthropicReply))
	}))
	cfg := `
keys:
  - {name: dev, key: good-key}
providers:
  - {name: local, kind: anthropic, base_url: "${UP}", keys: [klocal], models: ["m-*"]}
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [kanth], models: ["claude-*"]}
fallbacks:
  m-1: [anth/claude-sonnet-4-5]
guardrails:
  policies:
    - {providers: [local], rules: {"*": off}}
timeouts:
  keepalive: 0s
`
	base, _ := startServer(t, cfg, up.URL)
	key := secretOf(t, "slack_token")
	status, _, out := post(t, base+"/v1/messages", toolResultBody("m-1", "SLACK="+key), "x-api-key", "good-key")
	mu.Lock()
	defer mu.Unlock()
	if status != 200 || !bytes.Contains(local, []byte(key)) || external == nil {
		t.Fatalf("status %d %s; local got %d bytes, external %d", status, out, len(local), len(external))
	}
	if bytes.Contains(external, []byte(key)) || !placeholderRE.Match(external) {
		t.Fatalf("the failover's provider received %s", external)
	}
}

// TestGuardWebSocket: over the Responses WebSocket, a secret in a tool
// output of a chained turn never reaches the provider, in that turn or
// the next (which carries it again in the conversation the transport
// rebuilds), and both turns carry the same placeholder.
func TestGuardWebSocket(t *testing.T) {
	t.Parallel()
	fc := `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"cat .env\"}"}`
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		if n == 1 {
			return upReply{body: callAnswer("resp_a", fc)}
		}
		return upReply{body: textAnswer("resp_"+string(rune('a'+n-1)), "done")}
	}}
	base, _ := wsServer(t, u, "guardrails: {enabled: true}\n")
	key := secretOf(t, "npm_token")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	wsResponse(t, c)
	out := `{"type":"function_call_output","call_id":"call_1","output":"NPM_TOKEN=` + key + `\n"}`
	wsSend(t, c, frameJSON("["+out+"]", "resp_a"))
	wsResponse(t, c)
	wsSend(t, c, frameJSON(`[{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}]`, "resp_b"))
	wsResponse(t, c)
	var seen []string
	for i := 1; i < 3; i++ {
		m, _ := u.request(t, i)
		b, _ := json.Marshal(m)
		if bytes.Contains(b, []byte(key)) {
			t.Fatalf("turn %d reached the provider with the secret: %s", i+1, b)
		}
		ph := placeholderRE.FindString(string(b))
		if ph == "" {
			t.Fatalf("turn %d has no placeholder: %s", i+1, b)
		}
		seen = append(seen, ph)
	}
	if seen[0] != seen[1] {
		t.Fatalf("the same secret got %q then %q", seen[0], seen[1])
	}
}

// TestGuardVisible: the access log names the rules that matched (never
// a value), and /metrics counts matches by rule and action.
func TestGuardVisible(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, guardrailsConfig+"log: {access: true, format: json}\n", up.URL), &logs)
	key, mail := secretOf(t, "aws_access_key_id"), "dev.ops@example.org"
	_, h, _ := post(t, base+"/v1/messages", toolResultBody("claude-sonnet-4-5", key+" "+key), "x-api-key", "good-key")
	line := waitLogLine(t, &logs, h.Get(requestIDHeader))
	if line["guardrails"] != "aws_access_key_id" {
		t.Fatalf("guardrails field %v", line["guardrails"])
	}
	_, h, _ = post(t, base+"/v1/messages", toolResultBody("claude-sonnet-4-5", "PORT=1 "+mail), "x-api-key", "good-key")
	if line = waitLogLine(t, &logs, h.Get(requestIDHeader)); line["guardrails"] != "" {
		t.Fatalf("a request without a match logged guardrails %v", line["guardrails"])
	}
	if strings.Contains(logs.String(), key) {
		t.Fatal("the log holds the secret")
	}
	m := scrape(t, base+"/metrics", "good-key")
	if n := m[`slipstream_guardrail_matches_total{rule="aws_access_key_id",action="redact"}`]; n != 2 {
		t.Fatalf("%v matches counted: %v", n, m)
	}
}
