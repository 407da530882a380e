package server

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestCountTokensEndpoints(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n", "")
	f := func(path, body, field string, min, max int64) {
		t.Helper()
		status, _, got := post(t, base+path, body)
		n := gjson.GetBytes(got, field).Int()
		if status != 200 || n < min || n > max {
			t.Fatalf("%s: status %d, %s = %d (want %d..%d): %s", path, status, field, n, min, max, got)
		}
	}
	f("/v1/messages/count_tokens?beta=true", `{"model":"claude-sonnet-4-5","system":"You are terse.","messages":[{"role":"user","content":"hello world"}],"tools":[]}`, "input_tokens", 8, 20)
	f("/v1/responses/input_tokens", `{"model":"gpt-5","input":"hello world"}`, "input_tokens", 3, 12)
	f("/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[{"role":"user","parts":[{"text":"hello world"}]}]}`, "totalTokens", 3, 12)
	// A longer text counts more, by about its token count.
	long := `{"model":"claude-x","messages":[{"role":"user","content":"` + repeatWords(1000) + `"}]}`
	f("/v1/messages/count_tokens", long, "input_tokens", 1000, 1030)
	status, _, got := post(t, base+"/v1/messages/count_tokens", `{"model":"claude-x","messages":"nope"}`)
	if status != 400 {
		t.Fatalf("bad request: %d %s", status, got)
	}
}

func repeatWords(n int) string {
	b := make([]byte, 0, n*6)
	for i := 0; i < n; i++ {
		b = append(b, " hello"...)
	}
	return string(b)
}

func TestCountTokensUpstream(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: `{"input_tokens":4242}`}
	up := newUpstream(t, rec)
	yml := `
providers:
  - {name: a, kind: anthropic, base_url: "${UP}", keys: [ka], models: ["claude-*"], count_tokens: upstream}
  - {name: g, kind: gemini, base_url: "${UP}", keys: [kg], models: ["gemini-*"], count_tokens: upstream}
  - {name: o, kind: openai, base_url: "${UP}/v1", keys: [ko], models: ["gpt-*"]}
timeouts: {keepalive: 0s}
`
	base, _ := startServer(t, yml, up.URL)
	f := func(path, body, wantUpPath, wantBody string) {
		t.Helper()
		status, _, got := post(t, base+path, body)
		if status != 200 || string(got) != wantBody {
			t.Fatalf("%s: %d %s", path, status, got)
		}
		upBody, upPath, _ := rec.last()
		if upPath != wantUpPath || string(upBody) != body {
			t.Fatalf("%s: upstream got %s %s", path, upPath, upBody)
		}
	}
	f("/v1/messages/count_tokens?beta=true", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`,
		"/v1/messages/count_tokens?beta=true", rec.reply)
	f("/v1beta/models/gemini-x:countTokens", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		"/v1beta/models/gemini-x:countTokens", rec.reply)
	// A provider without count_tokens: upstream is counted locally.
	before := len(rec.bodies)
	status, _, got := post(t, base+"/v1/responses/input_tokens", `{"model":"gpt-5","input":"hi"}`)
	if status != 200 || !strings.Contains(string(got), `"object":"response.input_tokens"`) || len(rec.bodies) != before {
		t.Fatalf("local count: %d %s", status, got)
	}
}
