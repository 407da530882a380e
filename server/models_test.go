package server

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// getModels GETs path and returns the body, failing unless 200 and JSON.
func getModels(t *testing.T, base, path string, headers ...string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !gjson.ValidBytes(b) {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

func TestModelLists(t *testing.T) {
	t.Parallel()
	yml := "providers:\n  - {name: m, kind: mock, models: [\"mock*\", \"exact-model\"]}\naliases:\n  zfast: m/mock-1\n  afast: m/mock-2\n"
	base, _ := startServer(t, yml, "")
	// OpenAI shape by default; aliases sorted, then literal patterns, then "mock".
	openai := getModels(t, base, "/v1/models")
	if gjson.Get(openai, "object").Str != "list" || gjson.Get(openai, "data.#.id").Raw != `["afast","zfast","exact-model","mock"]` {
		t.Fatalf("openai shape: %s", openai)
	}
	// Anthropic shape when the client speaks Anthropic.
	anth := getModels(t, base, "/v1/models", "Anthropic-Version", "2023-06-01")
	if gjson.Get(anth, "data.0.type").Str != "model" || gjson.Get(anth, "first_id").Str != "afast" || gjson.Get(anth, "has_more").Type != gjson.False {
		t.Fatalf("anthropic shape: %s", anth)
	}
	// Gemini shape on /v1beta/models.
	gem := getModels(t, base, "/v1beta/models")
	if gjson.Get(gem, "models.0.name").Str != "models/afast" {
		t.Fatalf("gemini shape: %s", gem)
	}
}

// TestModelListsPatterns: a config that serves models only through
// patterns lists names a client can ask for, never a glob, in all three
// shapes: well-known client names that a pattern alias matches, and the
// upstream's own list (fetched once, cached) for a provider with
// list_models.
func TestModelListsPatterns(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	var auth atomic.Value
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Path != "/v1/models" {
			http.Error(w, "unexpected", 404)
			return
		}
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization") + " " + r.Header.Get("X-Org"))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"llama-3-70b","object":"model"},{"id":"qwen-coder"},{"id":"bad*glob"},{"id":42},{"id":"llama-4"}]}`)
	}))
	yml := `providers:
  - {name: up, kind: openai, base_url: "${UP}/v1", keys: [sk-up-list], models: ["llama-*", "qwen-*"], list_models: true, headers: {X-Org: org-7}}
  - {name: gpt, kind: openai, base_url: "${UP}/v1", keys: [sk-up], models: ["nothing-known-*"]}
aliases:
  "claude-*": up/llama-4
`
	base, _ := startServer(t, yml, up.URL)
	want := `["llama-3-70b","qwen-coder","llama-4","claude-opus-4-8","claude-sonnet-5","claude-haiku-4-5-20251001","claude-haiku-4-5","claude-fable-5"]`
	for i := 0; i < 3; i++ {
		openai := getModels(t, base, "/v1/models")
		if got := gjson.Get(openai, "data.#.id").Raw; got != want {
			t.Fatalf("openai list = %s, want %s", got, want)
		}
	}
	anth := getModels(t, base, "/v1/models", "X-Api-Key", "x")
	if got := gjson.Get(anth, "data.#.id").Raw; got != want || gjson.Get(anth, "last_id").Str != "claude-fable-5" {
		t.Fatalf("anthropic list = %s", anth)
	}
	gem := getModels(t, base, "/v1beta/models")
	if got := gjson.Get(gem, "models.#.displayName").Raw; got != want || gjson.Get(gem, "models.0.name").Str != "models/llama-3-70b" {
		t.Fatalf("gemini list = %s", gem)
	}
	for _, b := range []string{anth, gem} {
		if strings.ContainsAny(b, "*?") {
			t.Fatalf("a list holds a glob: %s", b)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("upstream list fetched %d times, want once (cached)", n)
	}
	if a, _ := auth.Load().(string); a != "Bearer sk-up-list org-7" {
		t.Fatalf("upstream list credential and provider header %q", a)
	}
}

// TestModelListsByKey: a client key sees only the models it may use.
func TestModelListsByKey(t *testing.T) {
	t.Parallel()
	yml := `keys:
  - {name: k, key: sk-claude-only, models: ["claude-*"]}
providers:
  - {name: m, kind: mock, models: ["*"]}
aliases:
  fast: m/mock-1
`
	base, _ := startServer(t, yml, "")
	got := gjson.Get(getModels(t, base, "/v1/models", "Authorization", "Bearer sk-claude-only"), "data.#.id").Raw
	if got != `["claude-opus-4-8","claude-sonnet-5","claude-haiku-4-5-20251001","claude-haiku-4-5","claude-fable-5"]` {
		t.Fatalf("list for a claude-only key = %s", got)
	}
}

// TestUnknownModelNamesConfigured: the 404 for an unknown model says which
// names and patterns are configured.
func TestUnknownModelNamesConfigured(t *testing.T) {
	t.Parallel()
	yml := "providers:\n  - {name: m, kind: mock, models: [\"mock*\", \"exact-model\"]}\naliases:\n  fast: m/mock-1\n  \"claude-*\": m/mock-2\n"
	base, _ := startServer(t, yml, "")
	status, _, body := post(t, base+"/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`)
	msg := gjson.GetBytes(body, "error.message").Str
	if status != 404 || !strings.Contains(msg, "gpt-9") || !strings.Contains(msg, "fast, exact-model") || !strings.Contains(msg, "claude-*, mock*") {
		t.Fatalf("404 = %d %s", status, body)
	}
}

// TestPatternAliasKeepsKeyPolicy: a key is checked against the name the
// client sent, not the alias's target: a key for claude-* may use a
// pattern alias to a GPT model, and may not name that model itself.
func TestPatternAliasKeepsKeyPolicy(t *testing.T) {
	t.Parallel()
	yml := `keys:
  - {name: k, key: sk-claude-only, models: ["claude-*"]}
providers:
  - {name: m, kind: mock, models: ["mock*"]}
aliases:
  "claude-*": m/mock-gpt
`
	base, _ := startServer(t, yml, "")
	ask := func(model string) int {
		status, _, _ := post(t, base+"/v1/messages", `{"model":"`+model+`","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key", "sk-claude-only")
		return status
	}
	if s := ask("claude-opus-4-8"); s != 200 {
		t.Fatalf("claude-opus-4-8 through the alias: %d", s)
	}
	if s := ask("claude-opus-4-6[1m]"); s != 200 {
		t.Fatalf("claude-opus-4-6[1m] through the alias: %d", s)
	}
	if s := ask("mock-gpt"); s != 403 {
		t.Fatalf("the alias's target named directly: %d, want 403", s)
	}
}

// TestModelListsUpstreamHangs: an upstream whose model list never comes
// delays only the first GET /v1/models, by a bounded wait, and the list
// falls back to the well-known names.
func TestModelListsUpstreamHangs(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	yml := "providers:\n  - {name: up, kind: anthropic, base_url: \"${UP}\", keys: [sk-up], models: [\"claude-*\"], list_models: true}\n"
	base, _ := startServer(t, yml, up.URL)
	for i := 0; i < 2; i++ {
		start := time.Now()
		got := gjson.Get(getModels(t, base, "/v1/models"), "data.#.id").Raw
		if el := time.Since(start); el > modelListWait+2*time.Second || (i == 1 && el > time.Second) {
			t.Fatalf("GET /v1/models #%d took %v", i, el)
		}
		if !strings.Contains(got, `"claude-opus-4-8"`) {
			t.Fatalf("fallback list %s", got)
		}
	}
}
