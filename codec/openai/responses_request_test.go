package openai

import (
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// roundTripResponses reads body as a Responses client request and writes it
// back as a Responses upstream request for model "up-model".
func roundTripResponses(t *testing.T, body string) string {
	t.Helper()
	var r codec.Request
	if err := DecodeResponsesRequest(&r, []byte(body)); err != nil {
		t.Fatalf("DecodeResponsesRequest: %v", err)
	}
	out, err := AppendResponsesRequest(nil, &r, []byte("up-model"))
	if err != nil {
		t.Fatalf("AppendResponsesRequest: %v", err)
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid JSON written:\n%s", out)
	}
	return string(out)
}

func respCompactJSON(s string) string { return string(codec.Compact(nil, []byte(s))) }

func TestResponsesRequestCodex(t *testing.T) {
	body, err := os.ReadFile("testdata/responses/codex_request.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/responses/codex_request.want.json")
	if err != nil {
		t.Fatal(err)
	}
	got := roundTripResponses(t, string(body))
	if respCompactJSON(got) != respCompactJSON(string(want)) {
		t.Fatalf("unexpected request\ngot:  %s\nwant: %s", respCompactJSON(got), respCompactJSON(string(want)))
	}
}

func TestResponsesRequestNeutral(t *testing.T) {
	body, err := os.ReadFile("testdata/responses/codex_request.json")
	if err != nil {
		t.Fatal(err)
	}
	var r codec.Request
	if err := DecodeResponsesRequest(&r, body); err != nil {
		t.Fatal(err)
	}
	if len(r.System) != 1 || string(r.System[0]) != `You are Codex, a coding agent.\nBe precise.` {
		t.Fatalf("System = %q", r.System)
	}
	if !r.Stream || r.Reasoning.Effort != codec.EffortHigh || !r.Reasoning.Summary || r.Parallel != -1 {
		t.Fatalf("options: stream %v effort %v summary %v parallel %d", r.Stream, r.Reasoning.Effort, r.Reasoning.Summary, r.Parallel)
	}
	var thinking, custom *codec.Part
	for i := range r.Parts {
		p := &r.Parts[i]
		switch {
		case p.Kind == codec.PartThinking:
			thinking = p
		case p.Kind == codec.PartToolCall && p.Custom:
			custom = p
		}
	}
	if thinking == nil || string(thinking.Text) != `**Listing**\n\nNeed to run ls.` || string(thinking.Signature) != "gAAAAB-enc1" {
		t.Fatalf("thinking = %+v", thinking)
	}
	if custom == nil || string(custom.Args) != `"*** Begin Patch\n*** End Patch"` || !custom.ArgsString {
		t.Fatalf("custom call = %+v", custom)
	}
	apply := r.FindTool([]byte("apply_patch"))
	if apply == nil || apply.Kind != codec.ToolCustom || !strings.Contains(string(apply.Format), "lark") {
		t.Fatalf("apply_patch = %+v", apply)
	}
	ns, inner, ok := splitFlatName(&r, []byte("collaboration__spawn_agent"))
	if !ok || string(ns) != "collaboration" || string(inner) != "spawn_agent" {
		t.Fatalf("splitFlatName = %q %q %v", ns, inner, ok)
	}
	ns, inner, ok = splitFlatName(&r, []byte("mcp__codex_apps__gmail_search_emails"))
	if !ok || string(ns) != "mcp__codex_apps__gmail" || string(inner) != "_search_emails" {
		t.Fatalf("splitFlatName = %q %q %v", ns, inner, ok)
	}
	if _, _, ok := splitFlatName(&r, []byte("shell")); ok {
		t.Fatalf("shell is not namespaced")
	}
	// Roles: the user turn, reasoning+call, its result, the custom call, its
	// result, the namespaced call, its result, the answer, the developer
	// message, the last user turn.
	roles := ""
	for _, m := range r.Messages {
		roles += "uas"[m.Role : m.Role+1]
	}
	if roles != "uauauauasu" {
		t.Fatalf("roles = %s", roles)
	}
}

func TestResponsesRequestWrite(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		got := roundTripResponses(t, body)
		if respCompactJSON(got) != respCompactJSON(want) {
			t.Fatalf("\ngot:  %s\nwant: %s", got, respCompactJSON(want))
		}
	}
	// String input, instructions, no options.
	f(`{"model":"m","instructions":"Be terse.","input":"hi"}`,
		`{"model":"up-model","instructions":"Be terse.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"store":false}`)
	// Instructions first, then leading system and developer messages; type omitted.
	f(`{"instructions":"A","input":[{"role":"system","content":"B"},{"role":"developer","content":[{"type":"input_text","text":"C"}]},{"role":"user","content":"u"}]}`,
		`{"model":"up-model","instructions":"A\n\nB\n\nC","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"u"}]}],"store":false}`)
	// Reasoning without a signature is dropped; refusal kept as text; reasoning null ignored.
	f(`{"input":[{"role":"user","content":"q"},{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]},{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}],"reasoning":null}`,
		`{"model":"up-model","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"no"}]}],"store":false}`)
	// Options: json_schema format, max tokens clamp, temperature, tool choice by name.
	f(`{"input":"x","text":{"format":{"type":"json_schema","name":"r","schema":{"type":"object"},"strict":true}},"max_output_tokens":1,"temperature":0.2,"top_p":1,"tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"f"},"reasoning":{"effort":"minimal"}}`,
		`{"model":"up-model","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}],"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{}},"strict":false}],"tool_choice":{"type":"function","name":"f"},"reasoning":{"effort":"minimal"},"include":["reasoning.encrypted_content"],"text":{"format":{"type":"json_schema","name":"r","schema":{"type":"object","additionalProperties":false},"strict":true}},"max_output_tokens":16,"temperature":0.2,"top_p":1,"store":false}`)
	// Failed tool output in Codex's old object shape becomes an Error: prefix.
	f(`{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":""},{"type":"function_call_output","call_id":"c","output":{"content":"boom","success":false}}]}`,
		`{"model":"up-model","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"Error: boom"}],"store":false}`)
	// Empty output and a custom tool choice.
	f(`{"input":[{"type":"custom_tool_call","call_id":"c","name":"p","input":"x"},{"type":"custom_tool_call_output","call_id":"c","output":""}],"tools":[{"type":"custom","name":"p"}],"tool_choice":{"type":"custom","name":"p"}}`,
		`{"model":"up-model","input":[{"type":"custom_tool_call","call_id":"c","name":"p","input":"x"},{"type":"custom_tool_call_output","call_id":"c","output":""}],"tools":[{"type":"custom","name":"p"}],"tool_choice":{"type":"custom","name":"p"},"store":false}`)
}

// TestResponsesRequestForeign writes requests as other dialects' readers
// produce them: object arguments, custom calls answered with an object,
// thinking with and without signatures, budgets.
func TestResponsesRequestForeign(t *testing.T) {
	f := func(r *codec.Request, want string) {
		t.Helper()
		out, err := AppendResponsesRequest(nil, r, []byte("m"))
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.ValidBytes(out) || string(out) != respCompactJSON(want) {
			t.Fatalf("\ngot:  %s\nwant: %s", out, respCompactJSON(want))
		}
	}
	r := &codec.Request{Reasoning: codec.Reasoning{Budget: 10000, Summary: true}, MaxTokens: 64000}
	r.Tools = []codec.Tool{{Kind: codec.ToolCustom, Name: []byte("apply_patch")}}
	r.AddMessage(codec.RoleAssistant)
	r.AddPart(codec.Part{Kind: codec.PartThinking, Text: []byte("hmm"), Signature: []byte("sig")})
	r.AddPart(codec.Part{Kind: codec.PartThinking, Text: []byte("dropped")})
	r.AddPart(codec.Part{Kind: codec.PartRedactedThinking, Signature: []byte("opaque")})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: []byte("ok")})
	r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: []byte("toolu_1"), Name: []byte("get"), Args: []byte(`{ "city": "Pa\"ris" }`)})
	r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: []byte("toolu_2"), Name: []byte("apply_patch"), Args: []byte(`{"input":"*** Begin"}`)})
	r.AddMessage(codec.RoleUser)
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: []byte("toolu_1"), IsError: true, Children: 2})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: []byte("bad")})
	r.AddPart(codec.Part{Kind: codec.PartImage, MediaType: []byte("image/png"), Text: []byte("AAAA")})
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: []byte("toolu_2")})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: []byte("next")})
	f(r, `{"model":"m","input":[
{"type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}],"encrypted_content":"sig"},
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]},
{"type":"function_call","call_id":"toolu_1","name":"get","arguments":"{\"city\":\"Pa\\\"ris\"}"},
{"type":"custom_tool_call","call_id":"toolu_2","name":"apply_patch","input":"*** Begin"},
{"type":"function_call_output","call_id":"toolu_1","output":[{"type":"input_text","text":"Error: "},{"type":"input_text","text":"bad"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"auto"}]},
{"type":"custom_tool_call_output","call_id":"toolu_2","output":""},
{"type":"message","role":"user","content":[{"type":"input_text","text":"next"}]}],
"tools":[{"type":"custom","name":"apply_patch"}],
"reasoning":{"effort":"medium","summary":"auto"},"include":["reasoning.encrypted_content"],"max_output_tokens":64000,"store":false}`)

	if _, err := AppendResponsesRequest(nil, &codec.Request{N: 2}, []byte("m")); err == nil {
		t.Fatal("n > 1 must be rejected")
	}
}

func TestResponsesRequestErrors(t *testing.T) {
	f := func(body, wantErr string) {
		t.Helper()
		var r codec.Request
		err := DecodeResponsesRequest(&r, []byte(body))
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
	}
	f(`{"input":[{"role":"robot","content":"x"}]}`, `input[0]: unknown role "robot"`)
	f(`{"input":[{"role":"user","content":"x"},1]}`, `input[1]: item must be an object`)
	f(`{"input":[{"type":"message","content":"x"}]}`, `input[0]: message without a role`)
	f(`{"input":{"a":1}}`, `input: must be a string or an array`)
}
