package server

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

var fuzzPaths = []string{
	"/v1/messages", "/v1/chat/completions", "/v1/responses",
	"/v1beta/models/mock-1:generateContent", "/v1beta/models/mock-1:streamGenerateContent",
	"/v1/messages/count_tokens", "/v1/responses/input_tokens", "/v1beta/models/mock-1:countTokens",
	"/v1/models", "/nope",
}

// FuzzHandler drives the route/body entry point with arbitrary bodies on
// every route, served by the mock: it must never panic, and every non-200
// answer must be a JSON error body.
func FuzzHandler(f *testing.F) {
	seeds := []string{
		`{"model":"mock","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"mock","stream":true,"max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"call get_weather"}]}],"tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}`,
		`{"model":"mock","input":"hi","stream":true}`,
		`{"model":"mock","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"call apply_patch"}]}],"tools":[{"type":"custom","name":"apply_patch"}]}`,
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		`{"model":1}`, `{"model":"mock","messages":"x"}`, `[]`, `{`, ``, `{"model":"mock","messages":[{"role":"tool"}]}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	cfg, err := config.Parse([]byte("providers:\n  - {name: mock, kind: mock, models: [\"*\"]}\nlimits: {max_body_bytes: 65536}\n"), testkit.Env())
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		f.Fatal(err)
	}
	s.ready.Store(true)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := fuzzPaths[int(route)%len(fuzzPaths)]
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		if path == "/v1/models" {
			req.Header.SetMethod("GET")
		}
		req.SetRequestURI(path)
		req.SetBody(body)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, nil)
		h(&ctx)
		var out bytes.Buffer
		if err := ctx.Response.BodyWriteTo(&out); err != nil {
			t.Fatalf("writing the response: %v", err)
		}
		ctx.Response.Reset() // closes a body stream, releasing its exchange
		if status := ctx.Response.StatusCode(); status != 200 && !gjson.ValidBytes(out.Bytes()) {
			t.Fatalf("%s %q: status %d with a non-JSON body %q", path, body, status, out.Bytes())
		}
	})
}
