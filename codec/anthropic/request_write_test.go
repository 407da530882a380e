package anthropic

import (
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

func writeRequest(t *testing.T, r *codec.Request) string {
	t.Helper()
	out, err := AppendRequest(nil, r, []byte("up-model"))
	if err != nil {
		t.Fatalf("AppendRequest: %v", err)
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("AppendRequest wrote invalid JSON: %s", out)
	}
	return string(out)
}

// TestAppendRequestRoundTrip reads an Anthropic request and writes it back.
func TestAppendRequestRoundTrip(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		if err := DecodeRequest(&r, []byte(body)); err != nil {
			t.Fatalf("DecodeRequest: %v", err)
		}
		if got := writeRequest(t, &r); got != want {
			t.Fatalf("round trip of %s\ngot  %s\nwant %s", body, got, want)
		}
	}
	f(`{"model":"m","max_tokens":1024,"messages":[{"role":"user","content":"Hi"}]}`,
		`{"model":"up-model","max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`)
	// system joined, mid-conversation system -> user text merged into the user turn
	f(`{"model":"m","max_tokens":10,"stream":true,"system":[{"type":"text","text":"A"},{"type":"text","text":"B"}],"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"system","content":"S"},{"role":"user","content":"q2"}]}`,
		`{"model":"up-model","max_tokens":10,"system":"A\n\nB","messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"S"},{"type":"text","text":"q2"}]}],"stream":true}`)
	// tool loop with signed thinking keeps thinking on; results first; ids sanitised
	f(`{"model":"m","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":4000},"temperature":0.3,"messages":[
		{"role":"user","content":"w?"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"S1"},{"type":"tool_use","id":"call.1","name":"get","input":{"c":"P"}}]},
		{"role":"user","content":[{"type":"text","text":"also"},{"type":"tool_result","tool_use_id":"call.1","content":[{"type":"text","text":"18C"}]}]}],
		"tools":[{"name":"get","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"}}`,
		`{"model":"up-model","max_tokens":8096,"messages":[{"role":"user","content":[{"type":"text","text":"w?"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"S1"},{"type":"tool_use","id":"call_1","name":"get","input":{"c":"P"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":[{"type":"text","text":"18C"}]},{"type":"text","text":"also"}]}],"tools":[{"name":"get","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto"},"thinking":{"type":"enabled","budget_tokens":4000}}`)
	// adaptive thinking + effort + format; stop sequences; no tools -> no tool_choice
	f(`{"model":"m","max_tokens":64000,"thinking":{"type":"adaptive"},"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object"}}},"stop_sequences":["X"],"tool_choice":{"type":"auto"},"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"up-model","max_tokens":64000,"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}],"thinking":{"type":"adaptive"},"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false}}},"stop_sequences":["X"]}`)
	// images, redacted thinking, empty-content result, url image
	f(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/i.png"}},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]},{"role":"assistant","content":[{"type":"redacted_thinking","data":"D"},{"type":"tool_use","id":"t","name":"n","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`,
		`{"model":"up-model","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/i.png"}},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]},{"role":"assistant","content":[{"type":"redacted_thinking","data":"D"},{"type":"tool_use","id":"t","name":"n","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`)
}

// TestAppendRequestForeign writes neutral requests shaped like those the
// OpenAI and Gemini readers produce.
func TestAppendRequestForeign(t *testing.T) {
	f := func(r *codec.Request, want string) {
		t.Helper()
		if got := writeRequest(t, r); got != want {
			t.Fatalf("AppendRequest\ngot  %s\nwant %s", got, want)
		}
	}
	b := func(s string) []byte { return []byte(s) }
	text := func(s string) codec.Part { return codec.Part{Kind: codec.PartText, Text: b(s)} }
	call := func(id, args string, str bool) codec.Part {
		return codec.Part{Kind: codec.PartToolCall, ID: b(id), Name: b("f"), Args: b(args), ArgsString: str}
	}
	build := func(r *codec.Request, msgs ...any) *codec.Request {
		for _, m := range msgs {
			switch v := m.(type) {
			case codec.Role:
				r.AddMessage(v)
			case codec.Part:
				r.AddPart(v)
			}
		}
		return r
	}
	U, A, S := codec.RoleUser, codec.RoleAssistant, codec.RoleSystem

	// Chat arguments strings: valid -> unescaped object; "" -> {}; invalid -> _raw
	f(build(&codec.Request{}, U, text("q"), A, call("call_1", `"{\"city\":\"Paris\",\"n\":\"a\\nb\"}"`, true),
		call("call_2", `""`, true), call("call_3", `"{\"city\":"`, true), call("call_4", `"[1]"`, true)),
		`{"model":"up-model","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"f","input":{"city":"Paris","n":"a\nb"}},{"type":"tool_use","id":"call_2","name":"f","input":{}},{"type":"tool_use","id":"call_3","name":"f","input":{"_raw":"{\"city\":"}},{"type":"tool_use","id":"call_4","name":"f","input":{"_raw":"[1]"}}]}]}`)
	// Responses: custom tool call + definition, consecutive user messages merged,
	// empty assistant skipped without breaking the merge, unsigned thinking dropped
	custom := codec.Part{Kind: codec.PartToolCall, ID: b("call_9"), Name: b("apply_patch"), Args: b(`"*** Begin Patch\n"`), ArgsString: true, Custom: true}
	r := build(&codec.Request{System: [][]byte{b("sys")}}, U, text("a"), A, text(""), U, text("b"), S, text("dev"),
		A, codec.Part{Kind: codec.PartThinking, Text: b("no sig")}, custom,
		U, codec.Part{Kind: codec.PartToolResult, ID: b("call_9"), Children: 1}, text("done"))
	r.Tools = []codec.Tool{{Kind: codec.ToolCustom, Name: b("apply_patch"), Description: b("Patch"), Format: b(`{"type":"grammar","syntax":"lark"}`)}, {Name: b("ls")}}
	r.ToolChoice.Mode = codec.ToolChoiceAny
	r.Parallel = -1
	r.Temperature = b("1.5")
	r.TopP = b("0.9")
	r.Reasoning.Effort = codec.EffortMedium
	f(r, `{"model":"up-model","max_tokens":8192,"system":"sys","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"dev"}]},{"role":"assistant","content":[{"type":"tool_use","id":"call_9","name":"apply_patch","input":{"input":"*** Begin Patch\n"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_9","content":[{"type":"text","text":"done"}]}]}],"tools":[{"name":"apply_patch","description":"Patch\n\nThe input must follow this format: {\"type\":\"grammar\",\"syntax\":\"lark\"}","input_schema":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}},{"name":"ls","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"any","disable_parallel_tool_use":true},"thinking":{"type":"disabled"},"temperature":1,"top_p":0.9}`)

	// effort without a tool loop: enabled with the effort's bucket budget, max_tokens raised
	r = build(&codec.Request{MaxTokens: 1000, Temperature: b("0.2")}, U, text("q"))
	r.Reasoning.Effort = codec.EffortHigh
	r.Tools = []codec.Tool{{Name: b("ls")}}
	r.ToolChoice = codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: b("ls")}
	f(r, `{"model":"up-model","max_tokens":28672,"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}],"tools":[{"name":"ls","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"auto"},"thinking":{"type":"enabled","budget_tokens":24576}}`)
	// effort none, negative temperature clamped, Gemini raw args not an object
	r = build(&codec.Request{Temperature: b("-1")}, U, text("q"), A, call("", `"s"`, false))
	r.Reasoning.Effort = codec.EffortNone
	f(r, `{"model":"up-model","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","content":[{"type":"tool_use","id":"_","name":"f","input":{"_raw":"s"}}]}],"thinking":{"type":"disabled"},"temperature":0}`)

	if _, err := AppendRequest(nil, &codec.Request{N: 2}, nil); err != ErrN {
		t.Fatalf("n=2: got %v, want ErrN", err)
	}
}

// TestAppendRequestClaudeCode translates a Claude Code turn (as Claude
// Code sends it): billing line gone, mid-conversation system text merged into the user
// turn after the tool result, server tool dropped, adaptive thinking kept.
func TestAppendRequestClaudeCode(t *testing.T) {
	var r codec.Request
	if err := DecodeRequest(&r, readTestdata(t, "request_claude_code.json")); err != nil {
		t.Fatal(err)
	}
	got := writeRequest(t, &r)
	golden(t, "request_claude_code.out.json", []byte(got))
}
