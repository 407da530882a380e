package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

const allowConfig = `
keys:
  - {name: mini, key: key-mini, models: ["gpt-5-mini"]}
  - {name: alias, key: key-alias, models: ["fast"]}
  - {name: claude, key: key-claude, models: ["claude-haiku"]}
providers:
  - {name: chat, kind: openai, base_url: "${UP}/v1", keys: [k], models: ["gpt-*", "o3*"]}
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
aliases:
  fast: chat/gpt-5-mini
timeouts:
  keepalive: 0s
`

// TestModelAllowListCannotBeBypassed: a key allowed only gpt-5-mini (or
// only the alias fast) cannot reach another model by a second model
// member, an escaped or differently cased member name, or an escaped
// model name; the aliased splice rewrites the member slipstream routed on.
func TestModelAllowListCannotBeBypassed(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: chatReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, allowConfig, up.URL)
	f := func(key, path, body string, wantStatus int, wantUpModel string) {
		t.Helper()
		rec.mu.Lock()
		rec.bodies = nil
		rec.mu.Unlock()
		status, _, got := post(t, base+path, body, "Authorization", "Bearer "+key)
		if status != wantStatus {
			t.Fatalf("%s: status %d (want %d): %s", body, status, wantStatus, got)
		}
		upBody, _, _ := rec.last()
		if wantStatus != 200 {
			if upBody != nil {
				t.Fatalf("%s: reached the upstream: %s", body, upBody)
			}
			// The error is in the client's dialect.
			if strings.HasPrefix(path, "/v1/messages") && gjson.GetBytes(got, "type").Str != "error" ||
				!strings.HasPrefix(path, "/v1/messages") && !gjson.GetBytes(got, "error.message").Exists() {
				t.Fatalf("%s: error body %s", body, got)
			}
			return
		}
		// What the upstream runs, read as a JSON parser that keeps the
		// last member reads it.
		var last string
		gjson.ParseBytes(upBody).ForEach(func(k, v gjson.Result) bool {
			if strings.EqualFold(k.String(), "model") {
				last = v.String()
			}
			return true
		})
		if last != wantUpModel {
			t.Fatalf("%s: the upstream runs %q (body %s), want %q", body, last, upBody, wantUpModel)
		}
	}
	const chat = "/v1/chat/completions"
	f("key-mini", chat, `{"model":"gpt-5-mini","messages":[]}`, 200, "gpt-5-mini")
	f("key-mini", chat, `{"model":"gpt-5-mini","messages":[],"model":"o3-pro"}`, 400, "")
	f("key-mini", chat, `{"model":"gpt-5-mini","messages":[],"mod\u0065l":"o3-pro"}`, 400, "")
	f("key-mini", chat, `{"mod\u0065l":"o3-pro","model":"gpt-5-mini","messages":[]}`, 400, "")
	f("key-mini", chat, `{"model":"gpt-5-mini","Model":"o3-pro","messages":[]}`, 400, "")
	f("key-mini", chat, `{"model":"gpt-5-mini","stream":false,"stream":true,"messages":[]}`, 400, "")
	f("key-mini", chat, `{"model":"o3\u002dpro","messages":[]}`, 403, "")
	f("key-mini", chat, `{"model":"gpt\u002d5-mini","messages":[]}`, 200, "gpt-5-mini")
	f("key-mini", chat, `{"model":"gpt-5-mini\u0000","messages":[]}`, 400, "")
	// Aliases: the splice rewrites the one member slipstream routed on.
	f("key-alias", chat, `{"model":"fast","messages":[]}`, 200, "gpt-5-mini")
	f("key-alias", chat, `{"model":"fast","messages":[],"model":"o3-pro"}`, 400, "")
	f("key-alias", chat, `{"messages":[],"mod\u0065l":"fast"}`, 200, "gpt-5-mini")
	f("key-alias", chat, `{"messages":[{"role":"user","content":"\"model\":\"o3-pro\""}],"model":"fast"}`, 200, "gpt-5-mini")
	// Anthropic's route answers in its own shape.
	f("key-claude", "/v1/messages", `{"model":"claude-haiku","max_tokens":1,"messages":[],"model":"claude-opus"}`, 400, "")
	f("key-claude", "/v1/messages/count_tokens", `{"model":"claude-haiku","messages":[],"mod\u0065l":"claude-opus"}`, 400, "")
}

// TestFallbacksKeepAllowList: a key allowed one model whose provider
// answers 500 is not served by a fallback naming a model the key may not
// use (that upstream sees no request; the client gets the original
// failure), while a key allowed both models is.
func TestFallbacksKeepAllowList(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 500, nil }}
	costly := &recorder{reply: anthropicReply}
	ub, uc := newUpstream(t, bad), newUpstream(t, costly)
	yml := `keys:
  - {name: cheap, key: key-cheap-0123456789, models: ["gpt-5-mini"]}
  - {name: both, key: key-both-01234567890, models: ["gpt-5-mini", "claude-opus-*"]}
providers:
  - {name: chat, kind: openai, base_url: "` + ub.URL + `/v1", keys: [k1], models: ["gpt-*"]}
  - {name: anth, kind: anthropic, base_url: "` + uc.URL + `", keys: [k2], models: ["claude-*"]}
fallbacks:
  gpt-5-mini: [anth/claude-opus-4-8]
timeouts: {keepalive: 0s}
`
	base, _ := startServer(t, yml, "")
	body := `{"model":"gpt-5-mini","messages":[{"role":"user","content":"hi"}]}`
	status, _, b := post(t, base+"/v1/chat/completions", body, "Authorization", "Bearer key-cheap-0123456789")
	if status != 500 || !strings.Contains(string(b), "stub 500") {
		t.Fatalf("cheap key: %d %s, want the provider's 500", status, b)
	}
	if got, _, _ := costly.last(); got != nil {
		t.Fatalf("the fallback the key may not use was called: %s", got)
	}
	if status, _, b := post(t, base+"/v1/chat/completions", body, "Authorization", "Bearer key-both-01234567890"); status != 200 {
		t.Fatalf("key allowed the fallback: %d %s", status, b)
	}
	if got, _, _ := costly.last(); !strings.Contains(string(got), "claude-opus-4-8") {
		t.Fatalf("fallback request: %s", got)
	}
}
