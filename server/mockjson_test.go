package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// mockJSONConfig serves every model from a mock that streams in 3 deltas.
const mockJSONConfig = "providers:\n  - {name: m, kind: mock, models: [\"*\"], chunks: 3}\n"

// routerSchema is the shape of Gemini CLI's routing call, in Gemini's
// upper-case type names.
const routerSchema = `{"type":"OBJECT","properties":{"reasoning":{"type":"STRING","description":"why"},` +
	`"model_choice":{"type":"STRING","enum":["flash","pro"]}},"required":["reasoning","model_choice"]}`

// nestedSchema has every type, a nested object, an array and a nullable enum.
const nestedSchema = `{"type":"object","additionalProperties":false,"required":["name","count","ratio","ok","tags","inner","level"],` +
	`"properties":{"name":{"type":"string"},"count":{"type":"integer","minimum":2},"ratio":{"type":"number"},"ok":{"type":"boolean"},` +
	`"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},` +
	`"inner":{"type":"object","additionalProperties":false,"required":["x"],"properties":{"x":{"type":["integer","null"]}}},` +
	`"level":{"anyOf":[{"type":"string","enum":["low","high"]},{"type":"null"}]}}}`

// TestMockAnswersJSON: a request for JSON output, in each client dialect,
// streamed or not, gets one text answer that parses as JSON and satisfies
// the schema; a stream carries it in the configured number of deltas.
func TestMockAnswersJSON(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, mockJSONConfig, "")
	msgs := `"messages":[{"role":"user","content":"route this"}]`
	f := func(path, body, schema string, stream bool, d dialectText) {
		t.Helper()
		code, _, out := post(t, base+path, body)
		if code != 200 {
			t.Fatalf("%s: status %d: %s", path, code, clipT(out))
		}
		deltas := d(t, out, stream)
		if stream && len(deltas) != 3 {
			t.Fatalf("%s: %d text deltas %q, want 3", path, len(deltas), deltas)
		}
		if !stream && len(deltas) != 1 {
			t.Fatalf("%s: %d text blocks %q, want 1", path, len(deltas), deltas)
		}
		text := strings.Join(deltas, "")
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s: answer %q is not JSON: %v", path, text, err)
		}
		var sch any
		if err := json.Unmarshal([]byte(schema), &sch); err != nil {
			t.Fatal(err)
		}
		if err := validateJSON(v, sch, "$"); err != "" {
			t.Fatalf("%s: answer %s: %s", path, text, err)
		}
	}
	for _, stream := range []bool{false, true} {
		st := `,"stream":` + map[bool]string{false: "false", true: "true"}[stream]
		for _, schema := range []string{routerSchema, nestedSchema} {
			f("/v1/chat/completions", `{"model":"mock",`+msgs+st+`,"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":`+schema+`}}}`,
				schema, stream, chatText)
			f("/v1/responses", `{"model":"mock","input":"route this"`+st+`,"text":{"format":{"type":"json_schema","name":"r","strict":true,"schema":`+schema+`}}}`,
				schema, stream, responsesText)
			f("/v1/messages", `{"model":"mock","max_tokens":99,`+msgs+st+`,"output_config":{"format":{"type":"json_schema","schema":`+schema+`}}}`,
				schema, stream, anthropicText)
			gpath := "/v1beta/models/mock:generateContent"
			if stream {
				gpath = "/v1beta/models/mock:streamGenerateContent?alt=sse"
			}
			gen := `{"contents":[{"role":"user","parts":[{"text":"route this"}]}],"generationConfig":{"responseMimeType":"application/json",` +
				`"responseJsonSchema":` + schema + `,"thinkingConfig":{"thinkingLevel":"HIGH"}}}`
			f(gpath, gen, schema, stream, geminiText)
		}
		// Gemini's OpenAPI form (responseSchema) and JSON without a schema.
		gpath := "/v1beta/models/mock:generateContent"
		if stream {
			gpath = "/v1beta/models/mock:streamGenerateContent?alt=sse"
		}
		f(gpath, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":`+routerSchema+`}}`,
			routerSchema, stream, geminiText)
		f(gpath, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json"}}`,
			`{"type":"object"}`, stream, geminiText)
		f("/v1/chat/completions", `{"model":"mock",`+msgs+st+`,"response_format":{"type":"json_object"}}`,
			`{"type":"object"}`, stream, chatText)
		f("/v1/responses", `{"model":"mock","input":"hi"`+st+`,"text":{"format":{"type":"json_object"}}}`,
			`{"type":"object"}`, stream, responsesText)
	}
}

// dialectText returns the answer's text: each stream delta, or each text
// block of a whole response.
type dialectText func(t *testing.T, body []byte, stream bool) []string

// dataLines returns the data of each "data:" line of an SSE stream,
// events with an "event:" line included.
func dataLines(body []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

func chatText(t *testing.T, body []byte, stream bool) []string {
	if !stream {
		return []string{gjson.GetBytes(body, "choices.0.message.content").String()}
	}
	var out []string
	for _, d := range dataLines(body) {
		if c := gjson.GetBytes(d, "choices.0.delta.content"); c.Type == gjson.String && c.Str != "" {
			out = append(out, c.Str)
		}
	}
	return out
}

func responsesText(t *testing.T, body []byte, stream bool) []string {
	var out []string
	if !stream {
		gjson.GetBytes(body, "output.#.content.#(type==output_text)#.text").ForEach(func(_, v gjson.Result) bool {
			v.ForEach(func(_, s gjson.Result) bool { out = append(out, s.Str); return true })
			return true
		})
		return out
	}
	for _, d := range dataLines(body) {
		if gjson.GetBytes(d, "type").Str == "response.output_text.delta" {
			out = append(out, gjson.GetBytes(d, "delta").Str)
		}
	}
	return out
}

func anthropicText(t *testing.T, body []byte, stream bool) []string {
	var out []string
	if !stream {
		for _, c := range gjson.GetBytes(body, "content").Array() {
			if c.Get("type").Str == "text" {
				out = append(out, c.Get("text").Str)
			}
		}
		return out
	}
	for _, d := range dataLines(body) {
		if gjson.GetBytes(d, "delta.type").Str == "text_delta" {
			out = append(out, gjson.GetBytes(d, "delta.text").Str)
		}
	}
	return out
}

func geminiText(t *testing.T, body []byte, stream bool) []string {
	var out []string
	parts := func(d []byte) {
		for _, p := range gjson.GetBytes(d, "candidates.0.content.parts").Array() {
			// The last chunk of a stream carries an empty text part.
			if s := p.Get("text"); s.Exists() && !p.Get("thought").Bool() && (s.Str != "" || !stream) {
				out = append(out, s.Str)
			}
		}
	}
	if !stream {
		parts(body)
		return out
	}
	for _, d := range dataLines(body) {
		parts(d)
	}
	return out
}

// validateJSON checks v against the parts of JSON Schema structured output
// uses: type (either case, or a list), enum, required, properties,
// additionalProperties false, items, anyOf, minimum. It returns "" or what
// is wrong.
func validateJSON(v, schema any, at string) string {
	s, _ := schema.(map[string]any)
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if validateJSON(v, a, at) == "" {
				return ""
			}
		}
		return at + ": matches no anyOf alternative"
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || x == v
		}
		if !found {
			return at + ": not one of the enum"
		}
	}
	if !typeMatches(v, s["type"]) {
		return at + ": wrong type"
	}
	if lo, ok := s["minimum"].(float64); ok {
		if n, isNum := v.(float64); isNum && n < lo {
			return at + ": below minimum"
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := x[r.(string)]; !ok {
				return at + ": missing required " + r.(string)
			}
		}
		for k, val := range x {
			p, ok := props[k]
			if !ok && s["additionalProperties"] == false {
				return at + ": property " + k + " not allowed"
			}
			if msg := validateJSON(val, p, at+"."+k); msg != "" {
				return msg
			}
		}
	case []any:
		for _, e := range x {
			if msg := validateJSON(e, s["items"], at+"[]"); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func typeMatches(v, t any) bool {
	switch tt := t.(type) {
	case nil:
		return true
	case []any:
		for _, x := range tt {
			if typeMatches(v, x) {
				return true
			}
		}
		return false
	case string:
		switch strings.ToLower(tt) {
		case "object":
			_, ok := v.(map[string]any)
			return ok
		case "array":
			_, ok := v.([]any)
			return ok
		case "string":
			_, ok := v.(string)
			return ok
		case "number":
			_, ok := v.(float64)
			return ok
		case "integer":
			n, ok := v.(float64)
			return ok && n == float64(int64(n))
		case "boolean":
			_, ok := v.(bool)
			return ok
		case "null":
			return v == nil
		}
	}
	return false
}
