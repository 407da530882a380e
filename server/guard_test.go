package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"slipstream/guard"
	"slipstream/guard/guardtest"
	"slipstream/internal/testkit"
	"slipstream/server/config"
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
	f := &firstFails{failKey: "klocal"}
	up := newUpstream(t, f)
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
	local, external := f.bodies()
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

// TestGuardVisible: the access log and the usage ledger name the rules
// that matched (never a value), and /metrics counts matches by rule and
// action.
func TestGuardVisible(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	var logs testkit.Buffer
	database := filepath.Join(t.TempDir(), "usage.db")
	base, s := serveConfigServer(t, parseConfig(t, guardrailsConfig+"log: {access: true, format: json}\nusage: {database: \""+database+"\", batch_interval: 10ms}\n", up.URL), &logs)
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
	waitLedger(t, s.Ledger(), 2)
	es, err := s.Ledger().DB().Latest(t.Context(), 2)
	if err != nil || len(es) != 2 || es[0].Guardrails+es[1].Guardrails != "aws_access_key_id" {
		t.Fatalf("ledger: %+v %v", es, err)
	}
}

// restoreConfig redacts AWS key ids with restore, and every other default
// rule without.
const restoreConfig = `
keys:
  - {name: dev, key: good-key}
  - {name: other, key: other-key}
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
  - {name: chat, kind: openai, api: chat, base_url: "${UP}/v1", keys: [k], models: ["gpt-*"]}
guardrails:
  rules:
    aws_access_key_id: {action: redact, restore: true}
timeouts:
  keepalive: 0s
`

// anthropicTextStream is a Messages stream whose text is pieces, one
// delta each.
func anthropicTextStream(pieces ...string) string {
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for _, p := range pieces {
		q, _ := json.Marshal(p)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

// clientText is the text a Messages client assembles from a stream.
func clientText(t *testing.T, stream []byte) string {
	t.Helper()
	var text strings.Builder
	for _, line := range strings.Split(string(stream), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type, Text, PartialJSON string
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("an event that is not JSON: %s", data)
		}
		if ev.Type == "content_block_delta" {
			text.WriteString(ev.Delta.Text)
		}
	}
	return text.String()
}

// TestGuardRestoresStream: a placeholder the provider streams back, cut
// between two deltas at every offset, reaches the client as the original
// value, for the key whose request carried it; another key's client sees
// the placeholder.
func TestGuardRestoresStream(t *testing.T) {
	t.Parallel()
	e := &phEcho{reply: func(ph string, cut int) string {
		text := "key: " + ph + " done"
		return anthropicTextStream(text[:cut], text[cut:])
	}}
	up := newUpstream(t, e)
	base, _ := startServer(t, restoreConfig, up.URL)
	key := secretOf(t, "aws_access_key_id")
	body := strings.Replace(toolResultBody("claude-sonnet-4-5", "id="+key), `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1)
	status, _, out := post(t, base+"/v1/messages", body, "x-api-key", "good-key", "X-Cut", "0")
	ph := e.placeholder()
	if status != 200 || ph == "" {
		t.Fatalf("status %d, placeholder %q: %s", status, ph, out)
	}
	want := "key: " + key + " done"
	for cut := 0; cut <= len("key: "+ph+" done"); cut++ {
		_, _, out = post(t, base+"/v1/messages", body, "x-api-key", "good-key", "X-Cut", strconv.Itoa(cut))
		if got := clientText(t, out); got != want {
			t.Fatalf("cut at %d: the client got %q, want %q\n%s", cut, got, want, out)
		}
	}
	other := strings.Replace(body, "id="+key, "nothing secret", 1)
	_, _, out = post(t, base+"/v1/messages", other, "x-api-key", "other-key", "X-Cut", "9")
	if got := clientText(t, out); got != "key: "+ph+" done" {
		t.Fatalf("another key's client got %q, want the placeholder", got)
	}
}

// TestGuardRedactsAnswer: a secret the model writes in its answer reaches
// the client as a placeholder, streamed (cut anywhere) or whole.
func TestGuardRedactsAnswer(t *testing.T) {
	t.Parallel()
	tok := secretOf(t, "github_token")
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		text := "use " + tok + " now"
		if !bytes.Contains(b.Bytes(), []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, strings.Replace(anthropicReply, "Done: the handler now returns JSON.", text, 1))
			return
		}
		cut := 0
		_, _ = fmt.Sscan(r.Header.Get("X-Cut"), &cut)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, anthropicTextStream(text[:cut], text[cut:]))
	}))
	base, _ := startServer(t, restoreConfig, up.URL)
	plain := toolResultBody("claude-sonnet-4-5", "nothing here")
	_, _, out := post(t, base+"/v1/messages", plain, "x-api-key", "good-key")
	if bytes.Contains(out, []byte(tok)) || !placeholderRE.Match(out) || !json.Valid(out) {
		t.Fatalf("whole answer: %s", out)
	}
	stream := strings.Replace(plain, `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1)
	for cut := 0; cut <= len("use "+tok+" now"); cut += 3 {
		_, _, out = post(t, base+"/v1/messages", stream, "x-api-key", "good-key", "X-Cut", strconv.Itoa(cut))
		got := clientText(t, out)
		if strings.Contains(got, tok) || !placeholderRE.MatchString(got) || !strings.HasPrefix(got, "use [REDACTED:github_token:") || !strings.HasSuffix(got, "] now") {
			t.Fatalf("cut at %d: %q", cut, got)
		}
	}
}

// chatToolStream is a Chat Completions stream of one Write tool call
// whose arguments arrive in pieces.
func chatToolStream(pieces ...string) string {
	var b strings.Builder
	chunk := func(delta, finish string) {
		b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n")
	}
	chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Write","arguments":""}}]}`, "null")
	for _, p := range pieces {
		q, _ := json.Marshal(p)
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(q)+`}}]}`, "null")
	}
	chunk(`{}`, `"tool_calls"`)
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// TestGuardRestoresToolArguments: a placeholder inside a translated
// tool call's arguments (JSON inside a JSON string) is restored escaped
// twice, so that the client's arguments parse to the original value, a
// private key with its line breaks, wherever the deltas are cut.
func TestGuardRestoresToolArguments(t *testing.T) {
	t.Parallel()
	e := &phEcho{reply: func(ph string, cut int) string {
		args, _ := json.Marshal(map[string]string{"file_path": "key.pem", "content": ph})
		return chatToolStream(string(args[:cut]), string(args[cut:]))
	}}
	up := newUpstream(t, e)
	cfg := strings.Replace(restoreConfig, "    aws_access_key_id: {action: redact, restore: true}", "    aws_access_key_id: {action: redact, restore: true}\n    private_key: {action: redact, restore: true}", 1)
	base, _ := startServer(t, cfg, up.URL)
	pem := secretOf(t, "private_key")
	body := strings.Replace(toolResultBody("gpt-4.1", pem), `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1)
	post(t, base+"/v1/messages", body, "x-api-key", "good-key", "X-Cut", "0")
	ph := e.placeholder()
	if ph == "" {
		t.Fatal("the provider got no placeholder")
	}
	n := len(`{"content":"` + ph + `","file_path":"key.pem"}`)
	for cut := 0; cut <= n; cut++ {
		_, _, out := post(t, base+"/v1/messages", body, "x-api-key", "good-key", "X-Cut", strconv.Itoa(cut))
		var args strings.Builder
		for _, line := range strings.Split(string(out), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Delta struct {
					PartialJSON string `json:"partial_json"`
				} `json:"delta"`
			}
			_ = json.Unmarshal([]byte(data), &ev)
			args.WriteString(ev.Delta.PartialJSON)
		}
		var in struct{ Content string }
		// The rule matched the key block, not the line break after it.
		if err := json.Unmarshal([]byte(args.String()), &in); err != nil || in.Content != strings.TrimSuffix(pem, "\n") {
			t.Fatalf("cut at %d: content %d bytes, want %d (%v); tail %q want %q", cut, len(in.Content), len(pem), err, in.Content[max(0, len(in.Content)-40):], pem[len(pem)-40:])
		}
	}
}

// TestGuardCorpusEveryDialect: agent traffic of all four dialects (tool
// results holding files, diffs and logs, encoded as the SDKs encode),
// holding generated secrets of every rule on by default, reaches a
// provider of its dialect, over HTTP and, for Responses, over the
// WebSocket, without one of them.
func TestGuardCorpusEveryDialect(t *testing.T) {
	t.Parallel()
	def, err := guard.Compile(guard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var secrets []guardtest.Secret
	for _, s := range guardtest.Secrets(3, 2) {
		if slices.Contains(def.Rules(), s.Rule) {
			secrets = append(secrets, s)
		}
	}
	rec := &recorder{}
	up := newUpstream(t, rec)
	cfg := `
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
  - {name: chat, kind: openai, api: chat, base_url: "${UP}/v1", keys: [k], models: ["gpt-4*"]}
  - {name: resp, kind: openai, api: responses, base_url: "${UP}/v1", keys: [k], models: ["gpt-5*"]}
  - {name: gem, kind: gemini, base_url: "${UP}", keys: [k], models: ["gemini-*"]}
guardrails: {enabled: true}
timeouts: {keepalive: 0s}
`
	base, _ := startServer(t, cfg, up.URL)
	leaks := func(what string, got []byte) {
		t.Helper()
		if got == nil {
			t.Fatalf("%s: nothing reached the provider", what)
		}
		for _, s := range secrets {
			if bytes.Contains(got, []byte(s.Value)) {
				t.Errorf("%s: %s (%s) reached the provider", what, s.Rule, s.Variant)
			}
		}
	}
	for _, c := range []struct{ dialect, path, model, reply string }{
		{guardtest.DialectAnthropic, "/v1/messages", "", anthropicReply},
		{guardtest.DialectChat, "/v1/chat/completions", "", chatReply},
		{guardtest.DialectResponses, "/v1/responses", "gpt-5.5", responsesReply},
		{guardtest.DialectGemini, "/v1beta/models/gemini-2.5-pro:generateContent", "", geminiReply},
	} {
		rec.mu.Lock()
		rec.reply = c.reply
		rec.mu.Unlock()
		body := guardtest.Traffic(c.dialect, 5, secrets)
		if c.model != "" {
			body = setModel(t, body, c.model)
		}
		status, _, out := post(t, base+c.path, string(body))
		if status != 200 {
			t.Fatalf("%s: status %d: %s", c.dialect, status, clipT(out))
		}
		got, _, _ := rec.last()
		leaks(c.dialect, got)
	}
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_ws", "ok")} }}
	wsBase, _ := wsServer(t, u, "guardrails: {enabled: true}\n")
	c, _ := wsDial(t, wsBase, "/v1/responses")
	wsSend(t, c, string(guardtest.TrafficWS(5, secrets)))
	wsResponse(t, c)
	m, _ := u.request(t, 0)
	b, _ := json.Marshal(m)
	leaks("websocket", b)
}

// setModel replaces the model of a JSON body.
func setModel(t *testing.T, body []byte, model string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["model"] = model
	b, _ := json.Marshal(m)
	return b
}

// TestGuardFailoverToUnguarded: a request redacted for a first provider
// that fails reaches a fallback under a policy that turns every rule off
// as the client sent it (the redacted copy it replaced is kept until the
// request ends: views into it may live on).
func TestGuardFailoverToUnguarded(t *testing.T) {
	t.Parallel()
	f := &firstFails{failKey: "kanth"}
	up := newUpstream(t, f)
	cfg := `
keys:
  - {name: dev, key: good-key}
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [kanth], models: ["claude-*"]}
  - {name: local, kind: anthropic, base_url: "${UP}", keys: [klocal], models: ["local-*"]}
fallbacks:
  claude-sonnet-4-5: [local/local-llama]
guardrails:
  policies:
    - {providers: [local], rules: {"*": off}}
timeouts:
  keepalive: 0s
`
	base, _ := startServer(t, cfg, up.URL)
	key := secretOf(t, "gitlab_token")
	body := toolResultBody("claude-sonnet-4-5", "GITLAB="+key)
	status, _, out := post(t, base+"/v1/messages", body, "x-api-key", "good-key")
	first, second := f.bodies()
	if status != 200 || first == nil || bytes.Contains(first, []byte(key)) || !placeholderRE.Match(first) {
		t.Fatalf("status %d %s; the first provider got %s", status, out, first)
	}
	want := strings.Replace(body, "claude-sonnet-4-5", "local-llama", 1)
	mustEqual(t, "the unguarded fallback's body", second, []byte(want))
}

// TestGuardReload: a reload that turns guardrails on applies to the next
// request; one whose list file cannot be read is refused and the rules in
// force stay; a placeholder issued before a reload is still restored
// after it (the vault outlives generations).
func TestGuardReload(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var last []byte
	var echo string
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		mu.Lock()
		last = b.Bytes()
		e := echo
		mu.Unlock()
		if e == "" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, anthropicReply)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, anthropicTextStream("key: "+e[:7], e[7:]+" done"))
	}))
	plain := "keys:\n  - {name: dev, key: good-key}\nproviders:\n  - {name: anth, kind: anthropic, base_url: \"${UP}\", keys: [k], models: [\"claude-*\"]}\ntimeouts: {keepalive: 0s}\n"
	guarded := plain + "guardrails:\n  rules:\n    aws_access_key_id: {action: redact, restore: true}\n"
	base, s := startServer(t, plain, up.URL)
	key := secretOf(t, "aws_access_key_id")
	body := toolResultBody("claude-sonnet-4-5", "id="+key)
	got := func() []byte {
		t.Helper()
		if status, _, out := post(t, base+"/v1/messages", body, "x-api-key", "good-key"); status != 200 {
			t.Fatalf("status %d: %s", status, out)
		}
		mu.Lock()
		defer mu.Unlock()
		return last
	}
	if !bytes.Contains(got(), []byte(key)) {
		t.Fatal("without guardrails the provider did not get the body as sent")
	}
	if err := s.Reload(parseConfig(t, guarded, up.URL)); err != nil {
		t.Fatal(err)
	}
	ph := placeholderRE.Find(got())
	if ph == nil {
		t.Fatal("after the reload the body was not redacted")
	}
	bad := strings.ReplaceAll(guarded+"  lists:\n    - {name: customers, file: /nonexistent/customers.txt}\n", "${UP}", up.URL)
	if cfg, err := config.Parse([]byte(bad), testkit.Env()); err == nil {
		if err := s.Reload(cfg); err == nil {
			t.Fatal("a reload whose list file cannot be read was applied")
		}
	}
	if err := s.Reload(parseConfig(t, guarded+"log: {access: false}\n", up.URL)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	echo = string(ph)
	mu.Unlock()
	stream := strings.Replace(body, `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1)
	_, _, out := post(t, base+"/v1/messages", stream, "x-api-key", "good-key")
	if got := clientText(t, out); got != "key: "+key+" done" {
		t.Fatalf("after two reloads the client got %q", got)
	}
}

// firstFails is an upstream that answers 503 to the requests made with
// the credential failKey and 200 to the others, keeping the body of the
// last of each.
type firstFails struct {
	failKey        string
	mu             sync.Mutex
	failed, served []byte
}

func (f *firstFails) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	_, _ = b.ReadFrom(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("X-Api-Key") == f.failKey {
		f.failed = b.Bytes()
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`))
		return
	}
	f.served = b.Bytes()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(anthropicReply))
}

// bodies returns the bodies the failing and the serving credential got.
func (f *firstFails) bodies() (failed, served []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed, f.served
}

// phEcho is an upstream that remembers the last placeholder a request
// carried and answers with the event stream reply makes of it, cut where
// the request's X-Cut header says.
type phEcho struct {
	reply func(ph string, cut int) string
	mu    sync.Mutex
	ph    string
}

func (e *phEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	_, _ = b.ReadFrom(r.Body)
	e.mu.Lock()
	if m := placeholderRE.Find(b.Bytes()); m != nil {
		e.ph = string(m)
	}
	ph := e.ph
	e.mu.Unlock()
	cut := 0
	_, _ = fmt.Sscan(r.Header.Get("X-Cut"), &cut)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, e.reply(ph, cut))
}

// placeholder is the last placeholder a request carried, or "".
func (e *phEcho) placeholder() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ph
}
