package mock

import (
	"encoding/json"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/server/config"
)

func TestAppendArgs(t *testing.T) {
	f := func(schema, want string) {
		t.Helper()
		got := string(AppendArgs(nil, []byte(schema)))
		if got != want {
			t.Fatalf("AppendArgs(%s)\n got %s\nwant %s", schema, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("AppendArgs(%s) is not JSON: %s", schema, got)
		}
	}
	// Claude Code's Bash tool: the command is a harmless echo; optional
	// properties are left out.
	f(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"command":{"description":"The command to execute","type":"string"},"timeout":{"type":"number"},"description":{"type":"string"},"run_in_background":{"type":"boolean"}},"required":["command"],"additionalProperties":false}`,
		`{"command":"echo slipstream-mock"}`)
	// Codex's exec_command.
	f(`{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"},"yield_time_ms":{"type":"number"}},"required":["cmd"],"additionalProperties":false}`,
		`{"cmd":"echo slipstream-mock"}`)
	// Codex's older shell tool: argv as an array of strings.
	f(`{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},"workdir":{"type":"string"}},"required":["command"]}`,
		`{"command":["bash","-lc","echo slipstream-mock"]}`)
	// File tools.
	f(`{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer","minimum":0}},"required":["file_path"]}`,
		`{"file_path":"/tmp/slipstream-mock.txt"}`)
	f(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string"}},"required":["pattern","path"]}`,
		`{"pattern":"*.md","path":"."}`)
	// Every type, enums, bounds, nesting, type lists, $ref, anyOf.
	f(`{"type":"object","required":["mode","n","ratio","ok","tags","opts","maybe","ref","alt","timeout_ms","c","short"],
	    "properties":{"mode":{"type":"string","enum":["fast","slow"]},"n":{"type":"integer","minimum":3,"maximum":9},
	    "ratio":{"type":"number","exclusiveMinimum":1},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"},"minItems":2},
	    "opts":{"type":"object","properties":{"depth":{"type":"integer","maximum":0}},"required":["depth"]},
	    "maybe":{"type":["null","string"]},"ref":{"$ref":"#/$defs/Thing"},"alt":{"anyOf":[{"type":"null"},{"type":"integer"}]},
	    "timeout_ms":{"type":"integer"},"c":{"const":"fixed"},"short":{"type":"string","maxLength":4}},
	    "$defs":{"Thing":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}}`,
		`{"mode":"fast","n":3,"ratio":2,"ok":false,"tags":["slipstream-mock","slipstream-mock"],"opts":{"depth":0},"maybe":"slipstream-mock","ref":{"url":"https://example.com/"},"alt":1,"timeout_ms":10000,"c":"fixed","short":"slip"}`)
	// Gemini's OpenAPI schemas spell types in capitals.
	f(`{"type":"OBJECT","properties":{"city":{"type":"STRING"},"days":{"type":"INTEGER"}},"required":["city","days"]}`,
		`{"city":"slipstream-mock","days":1}`)
	// No schema, no required, malformed, hostile.
	f(``, `{}`)
	f(`{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`)
	f(`{"type":`, `{}`)
	f(`{"required":["a\"b\u0001"],"properties":{}}`, `{"a\"b\u0001":"slipstream-mock"}`)
	f(`{"required":["self"],"properties":{"self":{"$ref":"#/properties/self"}}}`, `{"self":null}`)
	f(`{"required":["x"],"properties":{"x":{"$ref":"http://elsewhere/schema"}}}`, `{"x":"slipstream-mock"}`)
}

func TestAppendValue(t *testing.T) {
	f := func(schema, want string) {
		t.Helper()
		got := string(AppendValue(nil, []byte(schema)))
		if got != want {
			t.Fatalf("AppendValue(%s)\n got %s\nwant %s", schema, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("AppendValue(%s) is not JSON: %s", schema, got)
		}
	}
	// Gemini CLI's routing call, in Gemini's type names: the enum's
	// first value, every required property.
	f(`{"type":"OBJECT","properties":{"reasoning":{"type":"STRING"},"model_choice":{"type":"STRING","enum":["flash","pro"]}},"required":["reasoning","model_choice"]}`,
		`{"reasoning":"slipstream-mock","model_choice":"flash"}`)
	// Optional properties are filled too: a client reads the fields.
	f(`{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"BOOLEAN"}},"required":["b","c"]}`,
		`{"a":"slipstream-mock","b":false,"c":"slipstream-mock"}`)
	// Nullable (Gemini) and type lists (JSON Schema) get a value.
	f(`{"type":"OBJECT","required":["n"],"properties":{"n":{"type":"INTEGER","nullable":true,"minimum":5}}}`, `{"n":5}`)
	// A root of any type; a root reached through $ref or anyOf.
	f(`{"type":"ARRAY","items":{"type":"STRING","enum":["a"]}}`, `["a"]`)
	f(`{"type":"string","format":"date-time"}`, `"2026-01-01T00:00:00Z"`)
	f(`{"type":"boolean"}`, `false`)
	f(`{"enum":[3,4]}`, `3`)
	f(`{"$ref":"#/$defs/R","$defs":{"R":{"type":"object","required":["at"],"properties":{"at":{"type":"string","format":"date"}}}}}`, `{"at":"2026-01-01"}`)
	f(`{"anyOf":[{"type":"null"},{"type":"object","required":["u"],"properties":{"u":{"type":"string","format":"uri"}}}]}`, `{"u":"https://example.com/"}`)
	// No type at the root: an object; none, malformed, cyclic.
	f(`{"required":["a"],"properties":{"a":{"type":"number"}}}`, `{"a":1}`)
	f(`{}`, `{}`)
	f(``, `{}`)
	f(`{"type":`, `{}`)
	f(`{"$ref":"#"}`, `{}`)
	f(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, `null`)
}

// decode reads an Anthropic request body into the neutral form.
func decode(t *testing.T, body string) *codec.Request {
	t.Helper()
	r := &codec.Request{}
	if err := translate.DecodeRequest(codec.DialectAnthropic, r, []byte(body)); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBuildToolCallAndResult(t *testing.T) {
	m := New(&config.Provider{Reply: "unused", Chunks: 4})
	tools := `"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`
	var a Answer
	m.Build(&a, decode(t, `{"model":"m","max_tokens":9,`+tools+`,"messages":[{"role":"user","content":"please call Bash now"}]}`), 1)
	var args []byte
	for _, ev := range a.Events {
		if ev.Kind == codec.EventToolArgs {
			args = ev.Text
		}
	}
	if string(args) != `{\"command\":\"echo slipstream-mock\"}` {
		t.Fatalf("tool args %s", args)
	}
	// The result comes back: the mock answers with text quoting it, and
	// does not call the tool again.
	m.Build(&a, decode(t, `{"model":"m","max_tokens":9,`+tools+`,"messages":[{"role":"user","content":"please call Bash now"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo slipstream-mock"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"slipstream-mock\n\u00e9\"x\\/y"},{"type":"text","text":"call Bash again"}]}]}`), 1)
	var text strings.Builder
	for _, ev := range a.Events {
		if ev.Kind == codec.EventToolCall {
			t.Fatalf("the mock called a tool again after its result")
		}
		if ev.Kind == codec.EventText {
			text.Write(ev.Text)
		}
	}
	if got := text.String(); got != "The tool returned: slipstream-mock x /y" {
		t.Fatalf("reply after the tool result: %q", got)
	}
}

func TestChunksExact(t *testing.T) {
	f := func(reply string, n, want int) {
		t.Helper()
		m := New(&config.Provider{Reply: reply, Chunks: n})
		var a Answer
		m.Build(&a, decode(t, `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`), 1)
		var all []byte
		got := 0
		for _, ev := range a.Events {
			if ev.Kind != codec.EventText {
				continue
			}
			if len(ev.Text) == 0 {
				t.Fatalf("reply %q chunks %d: an empty delta", reply, n)
			}
			if !json.Valid(append(append([]byte{'"'}, ev.Text...), '"')) {
				t.Fatalf("reply %q chunks %d: delta %q is not a whole JSON string", reply, n, ev.Text)
			}
			all = append(all, ev.Text...)
			got++
		}
		if got != want || string(all) != string(codec.AppendEscaped(nil, []byte(reply))) {
			t.Fatalf("reply %q chunks %d: %d deltas %q, want %d", reply, n, got, all, want)
		}
	}
	const hello = "Hello from the slipstream mock provider."
	for n := 1; n <= 6; n++ {
		f(hello, n, n) // by words
	}
	f(hello, 10, 10) // by characters
	f(hello, 40, 40)
	f(hello, 100, 40) // one per character at most
	f("é\"ü\n😀x", 5, 5)
	f("😀😀", 3, 2)
	f("ab", 1, 1)
}

// FuzzAppendArgs: any schema, hostile or cyclic, gives a JSON object.
func FuzzAppendArgs(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`))
	f.Add([]byte(`{"required":["a","b"],"properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"#/properties/a"}}}`))
	f.Add([]byte(`{"required":["x"],"properties":{"x":{"type":"array","minItems":99999,"items":{"anyOf":[{"type":"null"},{"enum":[]}]}}}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		out := AppendArgs(nil, schema)
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("AppendArgs(%q) = %q: %v", schema, out, err)
		}
	})
}

// FuzzAppendValue: any schema gives JSON.
func FuzzAppendValue(f *testing.F) {
	f.Add([]byte(`{"type":"OBJECT","properties":{"a":{"type":"STRING","enum":["x"]}},"required":["a"]}`))
	f.Add([]byte(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`))
	f.Add([]byte(`{"type":"array","minItems":99,"items":{"$ref":"#"}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		if out := AppendValue(nil, schema); !json.Valid(out) {
			t.Fatalf("AppendValue(%q) = %q", schema, out)
		}
	})
}

// TestAppendArgsBounded: nested arrays with large minItems, or a cycle
// through them, stay small.
func TestAppendArgsBounded(t *testing.T) {
	nested := `{"type":"array","minItems":1000,"items":%s}`
	s := `{"type":"string","minLength":4096}`
	for i := 0; i < 12; i++ {
		s = strings.ReplaceAll(nested, "%s", s)
	}
	for _, schema := range []string{
		`{"required":["a"],"properties":{"a":` + s + `}}`,
		`{"required":["a"],"properties":{"a":{"type":"array","minItems":99,"items":{"$ref":"#/properties/a"}}}}`,
		`{"properties":{"a":{"$ref":"#"},"b":{"$ref":"#"},"c":{"type":"array","minItems":4,"items":{"$ref":"#"}}}}`,
	} {
		for _, out := range [][]byte{AppendArgs(nil, []byte(schema)), AppendValue(nil, []byte(schema))} {
			if len(out) > maxArgsBytes+8192 || !json.Valid(out) {
				t.Fatalf("%d bytes, valid %v", len(out), json.Valid(out))
			}
		}
	}
}
