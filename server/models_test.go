package server

import (
	"io"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

func TestModelLists(t *testing.T) {
	yml := "providers:\n  - {name: m, kind: mock, models: [\"mock*\", \"exact-model\"]}\naliases:\n  zfast: m/mock-1\n  afast: m/mock-2\n"
	base, _ := startServer(t, yml, "")
	get := func(path string, headers ...string) string {
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
	// OpenAI shape by default; aliases sorted, then literal patterns, then "mock".
	openai := get("/v1/models")
	if gjson.Get(openai, "object").Str != "list" || gjson.Get(openai, "data.#.id").Raw != `["afast","zfast","exact-model","mock"]` {
		t.Fatalf("openai shape: %s", openai)
	}
	// Anthropic shape when the client speaks Anthropic.
	anth := get("/v1/models", "Anthropic-Version", "2023-06-01")
	if gjson.Get(anth, "data.0.type").Str != "model" || gjson.Get(anth, "first_id").Str != "afast" || gjson.Get(anth, "has_more").Type != gjson.False {
		t.Fatalf("anthropic shape: %s", anth)
	}
	// Gemini shape on /v1beta/models.
	gem := get("/v1beta/models")
	if gjson.Get(gem, "models.0.name").Str != "models/afast" {
		t.Fatalf("gemini shape: %s", gem)
	}
}
