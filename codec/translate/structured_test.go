package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// structuredAnswer is the JSON text every structured/response.<d>.json
// carries as the model's answer.
const structuredAnswer = `{"reasoning":"Listing files and comparing sizes is a simple, bounded task.","model_choice":"flash"}`

// structuredFixtures returns testdata/structured/<name>.<client>.json
// request fixtures by name with their client dialect.
func structuredFixtures(t *testing.T) map[string]codec.Dialect {
	t.Helper()
	names, err := filepath.Glob("testdata/structured/*.*.json")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]codec.Dialect{}
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".json")
		if strings.HasPrefix(base, "response.") {
			continue
		}
		for _, d := range allDialects {
			if strings.HasSuffix(base, "."+fileNames[d]) {
				out[base] = d
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no structured fixtures")
	}
	return out
}

// TestStructuredOutputRequest runs every structured-output fixture through
// every other dialect and checks the upstream body against that provider's
// schema rules: standard lower-case JSON Schema with no Gemini-only keys,
// strict only for schemas OpenAI accepts as strict, every object closed
// where OpenAI strict mode or Anthropic require it.
func TestStructuredOutputRequest(t *testing.T) {
	for name, client := range structuredFixtures(t) {
		body, err := os.ReadFile(filepath.Join("testdata/structured", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, up := range allDialects {
			if up == client {
				continue
			}
			t.Run(name+"/"+fileNames[up], func(t *testing.T) {
				r := new(codec.Request)
				if err := DecodeRequest(client, r, body); err != nil {
					t.Fatalf("cannot decode: %s", err)
				}
				stamp(r, client)
				out, err := AppendRequest(up, nil, r, upstreamModels[up])
				if err != nil {
					t.Fatalf("cannot write: %s", err)
				}
				mustJSON(t, "request", out)
				checkUpstreamFormat(t, up, r.Format.Kind, gjson.ParseBytes(out))
			})
		}
	}
}

// checkUpstreamFormat checks the structured-output members of an upstream
// body of dialect up for a client format of kind k.
func checkUpstreamFormat(t *testing.T, up codec.Dialect, k codec.FormatKind, body gjson.Result) {
	t.Helper()
	if k != codec.FormatJSONSchema && k != codec.FormatJSONObject {
		t.Fatalf("client format kind %d, want a JSON format", k)
	}
	var schema gjson.Result
	strict := false
	switch up {
	case codec.DialectGemini:
		if got := body.Get("generationConfig.responseMimeType").Str; got != "application/json" {
			t.Errorf("responseMimeType = %q, want application/json", got)
		}
		schema = body.Get("generationConfig.responseJsonSchema")
	case codec.DialectChat:
		rf := body.Get("response_format")
		if k == codec.FormatJSONObject {
			wantEqual(t, "response_format.type", rf.Get("type").Str, "json_object")
			return
		}
		wantEqual(t, "response_format.type", rf.Get("type").Str, "json_schema")
		schema, strict = rf.Get("json_schema.schema"), rf.Get("json_schema.strict").Bool()
	case codec.DialectResponses:
		f := body.Get("text.format")
		if k == codec.FormatJSONObject {
			wantEqual(t, "text.format.type", f.Get("type").Str, "json_object")
			return
		}
		wantEqual(t, "text.format.type", f.Get("type").Str, "json_schema")
		schema, strict = f.Get("schema"), f.Get("strict").Bool()
	case codec.DialectAnthropic:
		f := body.Get("output_config.format")
		if k == codec.FormatJSONObject {
			if f.Exists() {
				t.Errorf("json_object has no Anthropic form, got output_config.format %s", f.Raw)
			}
			return
		}
		wantEqual(t, "output_config.format.type", f.Get("type").Str, "json_schema")
		schema, strict = f.Get("schema"), true
		checkNoBounds(t, schema)
	}
	if k == codec.FormatJSONObject {
		if schema.Exists() {
			t.Errorf("json_object grew a schema: %s", schema.Raw)
		}
		return
	}
	if !schema.IsObject() {
		t.Fatalf("no schema in the upstream body: %s", body.Raw)
	}
	checkStandardSchema(t, schema)
	if strict {
		checkStrictSchema(t, up, schema)
	}
}

func wantEqual(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// checkStandardSchema walks every value of a schema: type names are lower
// case and no Gemini-only key is left.
func checkStandardSchema(t *testing.T, v gjson.Result) {
	t.Helper()
	v.ForEach(func(k, c gjson.Result) bool {
		switch k.Str {
		case "nullable", "propertyOrdering":
			t.Errorf("Gemini-only key %q left in %s", k.Str, v.Raw)
		case "type":
			if c.Raw != strings.ToLower(c.Raw) {
				t.Errorf("type %s is not lower case", c.Raw)
			}
		case "format":
			switch c.Str {
			case "int32", "int64", "float", "double", "enum":
				t.Errorf("OpenAPI-only format %q left in %s", c.Str, v.Raw)
			}
		}
		if c.IsObject() || c.IsArray() {
			checkStandardSchema(t, c)
		}
		return true
	})
}

// checkStrictSchema checks that every object schema is closed and, for
// OpenAI, lists all its properties in required.
func checkStrictSchema(t *testing.T, up codec.Dialect, v gjson.Result) {
	t.Helper()
	if v.IsObject() && (v.Get("type").Str == "object" || v.Get("properties").Exists()) {
		if v.Get("additionalProperties").Raw != "false" {
			t.Errorf("object schema without additionalProperties:false: %s", v.Raw)
		}
		if up != codec.DialectAnthropic {
			v.Get("properties").ForEach(func(k, _ gjson.Result) bool {
				if !v.Get("required").IsArray() || !strings.Contains(v.Get("required").Raw, `"`+k.Str+`"`) {
					t.Errorf("strict schema with %q not in required: %s", k.Str, v.Raw)
				}
				return true
			})
		}
	}
	v.ForEach(func(_, c gjson.Result) bool {
		if c.IsObject() || c.IsArray() {
			checkStrictSchema(t, up, c)
		}
		return true
	})
}

// checkNoBounds checks that no numeric or length bound Anthropic refuses
// is left, and no type list.
func checkNoBounds(t *testing.T, v gjson.Result) {
	t.Helper()
	v.ForEach(func(k, c gjson.Result) bool {
		switch k.Str {
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "maxItems":
			t.Errorf("bound %q left for Anthropic in %s", k.Str, v.Raw)
		case "minItems":
			if c.Int() > 1 {
				t.Errorf("minItems %d left for Anthropic", c.Int())
			}
		case "type":
			if c.IsArray() {
				t.Errorf("type list %s left for Anthropic (it documents anyOf)", c.Raw)
			}
		}
		if c.IsObject() || c.IsArray() {
			checkNoBounds(t, c)
		}
		return true
	})
}

// TestStructuredOutputStrict pins the strict flag each fixture gets on the
// OpenAI dialects: set when the client asked for an enforced schema
// (Gemini and Anthropic always enforce theirs) and the schema meets
// OpenAI's strict rules once closed; false otherwise.
func TestStructuredOutputStrict(t *testing.T) {
	f := func(name string, client codec.Dialect, want string) {
		t.Helper()
		r, _ := decodeStructured(t, name, client)
		for _, up := range []codec.Dialect{codec.DialectChat, codec.DialectResponses} {
			if up == client {
				continue
			}
			out, err := AppendRequest(up, nil, r, upstreamModels[up])
			if err != nil {
				t.Fatal(err)
			}
			path := "response_format.json_schema.strict"
			if up == codec.DialectResponses {
				path = "text.format.strict"
			}
			if got := gjson.GetBytes(out, path).Raw; got != want {
				t.Errorf("%s to %s: %s = %q, want %q", name, up, path, got, want)
			}
		}
	}
	f("gemini_cli_routing.gemini", codec.DialectGemini, "true")
	f("genai_response_schema.gemini", codec.DialectGemini, "true")
	f("opencode_google.gemini", codec.DialectGemini, "false")
	f("openai_sdk_strict.chat", codec.DialectChat, "true")
	f("qwen_code_loose.chat", codec.DialectChat, "")
	f("ai_sdk_openai.responses", codec.DialectResponses, "true")
	f("anthropic_sdk_output_config.anthropic", codec.DialectAnthropic, "true")
}

func decodeStructured(t *testing.T, name string, client codec.Dialect) (*codec.Request, []byte) {
	t.Helper()
	body := readFile(t, "structured/"+name+".json")
	r := new(codec.Request)
	if err := DecodeRequest(client, r, body); err != nil {
		t.Fatalf("%s: cannot decode: %s", name, err)
	}
	stamp(r, client)
	return r, body
}

// TestStructuredOutputReasoning checks that Gemini thinkingLevel and
// thinkingBudget reach the other dialects' reasoning settings.
func TestStructuredOutputReasoning(t *testing.T) {
	f := func(name string, client, up codec.Dialect, path, want string) {
		t.Helper()
		r, _ := decodeStructured(t, name, client)
		out, err := AppendRequest(up, nil, r, upstreamModels[up])
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(out, path).Raw; got != want {
			t.Errorf("%s to %s: %s = %s, want %s\n%s", name, up, path, got, want, out)
		}
	}
	f("gemini_cli_routing.gemini", codec.DialectGemini, codec.DialectChat, "reasoning_effort", `"high"`)
	f("gemini_cli_routing.gemini", codec.DialectGemini, codec.DialectResponses, "reasoning.effort", `"high"`)
	f("gemini_cli_routing.gemini", codec.DialectGemini, codec.DialectAnthropic, "thinking.budget_tokens", "24576")
	f("gemini_json_mode.gemini", codec.DialectGemini, codec.DialectResponses, "reasoning.effort", `"low"`)
	f("genai_response_schema.gemini", codec.DialectGemini, codec.DialectAnthropic, "thinking.budget_tokens", "1024")
	f("opencode_google.gemini", codec.DialectGemini, codec.DialectAnthropic, "thinking.type", `"disabled"`)
	f("openai_sdk_strict.chat", codec.DialectChat, codec.DialectGemini, "generationConfig.thinkingConfig.thinkingBudget", "2048")
	f("anthropic_sdk_output_config.anthropic", codec.DialectAnthropic, codec.DialectGemini, "generationConfig.thinkingConfig.thinkingBudget", "2048")
}

// TestStructuredOutputAnswer checks the way back: the upstream's JSON
// answer reaches every client as plain JSON text where that dialect puts
// message text.
func TestStructuredOutputAnswer(t *testing.T) {
	for name, client := range structuredFixtures(t) {
		for _, up := range allDialects {
			if up == client {
				continue
			}
			t.Run(name+"/"+fileNames[up], func(t *testing.T) {
				r, _ := decodeStructured(t, name, client)
				body := readFile(t, "structured/response."+fileNames[up]+".json")
				out := translateBody(t, pair{client, up}, r, body)
				if got := clientText(client, gjson.ParseBytes(out)); got != structuredAnswer {
					t.Errorf("client text = %q, want %q\n%s", got, structuredAnswer, out)
				}
			})
		}
	}
}

// clientText joins the message text of a client-dialect response body.
func clientText(d codec.Dialect, body gjson.Result) string {
	var paths []string
	switch d {
	case codec.DialectAnthropic:
		paths = []string{`content.#(type=="text")#.text`}
	case codec.DialectChat:
		paths = []string{"choices.0.message.content"}
	case codec.DialectResponses:
		paths = []string{`output.#(type=="message")#.content.#.text`}
	case codec.DialectGemini:
		var b strings.Builder
		body.Get("candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
			if !p.Get("thought").Bool() {
				b.WriteString(p.Get("text").Str)
			}
			return true
		})
		return b.String()
	}
	var b strings.Builder
	for _, p := range paths {
		v := body.Get(p)
		if !v.IsArray() {
			b.WriteString(v.String())
			continue
		}
		flat(v, &b)
	}
	return b.String()
}

func flat(v gjson.Result, b *strings.Builder) {
	v.ForEach(func(_, c gjson.Result) bool {
		if c.IsArray() {
			flat(c, b)
		} else {
			b.WriteString(c.String())
		}
		return true
	})
}

// TestStructuredOutputStreamAnswer is TestStructuredOutputAnswer for
// streams: the JSON answer, in deltas, reaches every client as its text
// deltas.
func TestStructuredOutputStreamAnswer(t *testing.T) {
	for name, client := range structuredFixtures(t) {
		for _, up := range allDialects {
			if up == client {
				continue
			}
			t.Run(name+"/"+fileNames[up], func(t *testing.T) {
				r, _ := decodeStructured(t, name, client)
				stream := readFile(t, "structured/stream."+fileNames[up]+".sse")
				out := translateStream(t, pair{client, up}, r, readEvents(t, stream))
				if err := CheckStream(client, out); err != nil {
					t.Errorf("translated stream fails the %s grammar: %s", client, err)
				}
				if got := clientStreamText(t, client, out); got != structuredAnswer {
					t.Errorf("client text = %q, want %q\n%s", got, structuredAnswer, out)
				}
			})
		}
	}
}

// clientStreamText joins the text deltas of a client-dialect stream.
func clientStreamText(t *testing.T, d codec.Dialect, stream []byte) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range readEvents(t, stream) {
		v := gjson.ParseBytes(ev.data)
		switch d {
		case codec.DialectAnthropic:
			if v.Get("delta.type").Str == "text_delta" {
				b.WriteString(v.Get("delta.text").Str)
			}
		case codec.DialectChat:
			b.WriteString(v.Get("choices.0.delta.content").Str)
		case codec.DialectResponses:
			if v.Get("type").Str == "response.output_text.delta" {
				b.WriteString(v.Get("delta").Str)
			}
		case codec.DialectGemini:
			v.Get("candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
				if !p.Get("thought").Bool() {
					b.WriteString(p.Get("text").Str)
				}
				return true
			})
		}
	}
	return b.String()
}

// TestJSONObjectNeedsTheWord: OpenAI refuses json_object unless "json"
// appears in the messages, so a JSON mode request whose text never says
// it goes to Chat and Responses without the format rather than be refused.
func TestJSONObjectNeedsTheWord(t *testing.T) {
	f := func(prompt string, want bool) {
		t.Helper()
		body := `{"contents":[{"role":"user","parts":[{"text":` + prompt + `}]}],"generationConfig":{"responseMimeType":"application/json"}}`
		r := new(codec.Request)
		if err := DecodeRequest(codec.DialectGemini, r, []byte(body)); err != nil {
			t.Fatal(err)
		}
		for up, path := range map[codec.Dialect]string{codec.DialectChat: "response_format.type", codec.DialectResponses: "text.format.type"} {
			out, err := AppendRequest(up, nil, r, upstreamModels[up])
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(out, path).Str == "json_object"; got != want {
				t.Errorf("%s to %s: json_object sent = %v, want %v\n%s", prompt, up, got, want, out)
			}
		}
	}
	f(`"Name three primary colours as a JSON object."`, true)
	f(`"Answer in json, please."`, true)
	f(`"Name three primary colours."`, false)
}
