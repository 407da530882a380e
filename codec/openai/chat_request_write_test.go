package openai

import (
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

func TestAppendChatRequestRoundTrip(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		if err := DecodeChatRequest(&r, []byte(body)); err != nil {
			t.Fatalf("DecodeChatRequest: %v", err)
		}
		got, err := AppendChatRequest([]byte("prefix"), &r, []byte("up-model"))
		if err != nil {
			t.Fatalf("AppendChatRequest: %v", err)
		}
		if string(got[:6]) != "prefix" {
			t.Fatalf("dst prefix lost")
		}
		got = got[6:]
		if !gjson.ValidBytes(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
		if string(got) != want {
			t.Fatalf("unexpected request\ngot:  %s\nwant: %s", got, want)
		}
	}

	f(`{"model":"gpt-4.1","messages":[{"role":"user","content":"Hi"}]}`,
		`{"model":"up-model","messages":[{"role":"user","content":"Hi"}]}`)

	// System pieces join; tool round trip; stream asks for usage; n passes.
	f(`{"model":"gpt-4.1","stream":true,"n":2,"messages":[
  {"role": "system", "content": "You are terse."},
  {"role": "developer", "content": [{"type": "text", "text": "Answer in English."}]},
  {"role": "user", "content": [
    {"type": "text", "text": "What is in this picture?"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo", "detail": "auto"}}]},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_7", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
  {"role": "tool", "tool_call_id": "call_7", "content": "18C, sunny"},
  {"role": "user", "content": "thanks"}
]}`, `{"model":"up-model","messages":[{"role":"system","content":"You are terse.\n\nAnswer in English."},`+
		`{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo"}}]},`+
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_7","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},`+
		`{"role":"tool","tool_call_id":"call_7","content":"18C, sunny"},{"role":"user","content":[{"type":"text","text":"thanks"}]}],`+
		`"n":2,"stream":true,"stream_options":{"include_usage":true}}`)

	// Everything around the messages.
	f(`{"model":"o4","max_tokens":1000,"temperature":0.2,"top_p":1,"stop":["a","b","c","d"],
  "reasoning_effort":"high","parallel_tool_calls":false,
  "tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},
           {"type":"function","function":{"name":"now"}},
           {"type":"custom","custom":{"name":"apply_patch","description":"Patch files","format":{"type":"grammar","syntax":"lark","definition":"start: x\n"}}}],
  "tool_choice":"none",
  "response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object"}}},
  "messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"system","content":"z"}]}`,
		`{"model":"up-model","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"system","content":"z"}],`+
			`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},`+
			`{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}},`+
			`{"type":"function","function":{"name":"apply_patch","description":"Patch files\n\nThe input must follow this lark grammar:\nstart: x\n","parameters":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}}],`+
			`"parallel_tool_calls":false,"tool_choice":"none","max_completion_tokens":1000,"temperature":0.2,"top_p":1,"stop":["a","b","c","d"],`+
			`"reasoning_effort":"high","response_format":{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"}}}}`)
}

// TestAppendChatRequestNeutral writes requests shaped like the other
// dialects' readers produce them (Anthropic turn model).
func TestAppendChatRequestNeutral(t *testing.T) {
	f := func(r *codec.Request, want string) {
		t.Helper()
		got, err := AppendChatRequest(nil, r, []byte("m"))
		if err != nil {
			t.Fatalf("AppendChatRequest: %v", err)
		}
		if !gjson.ValidBytes(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
		if string(got) != want {
			t.Fatalf("unexpected request\ngot:  %s\nwant: %s", got, want)
		}
	}
	b := func(s string) []byte { return []byte(s) }

	// Anthropic tool round trip: thinking dropped, object input compacted
	// into a string, tool results split into tool messages with the image
	// moved to the user message after them, is_error prefixed.
	r := &codec.Request{System: [][]byte{b("Be terse.")}, MaxTokens: 64000, Reasoning: codec.Reasoning{Budget: 2048},
		ToolChoice: codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: b("get_weather")}, Parallel: -1}
	r.AddMessage(codec.RoleUser)
	r.AddPart(codec.Part{Kind: codec.PartText, Text: b("Weather?")})
	r.AddMessage(codec.RoleAssistant)
	r.AddPart(codec.Part{Kind: codec.PartThinking, Text: b("Need tool."), Signature: b("EqQB")})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: b("Checking.")})
	r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: b("toolu_01"), Name: b("get_weather"), Args: b(`{ "city": "Paris",  "q": "a \"b\" c" }`)})
	r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: b("toolu_02"), Name: b("now")})
	r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: b("call_3"), Name: b("apply_patch"), Custom: true, ArgsString: true, Args: b(`"*** Begin Patch\n"`)})
	r.AddMessage(codec.RoleUser)
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: b("toolu_01"), Children: 2})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: b("18C")})
	r.AddPart(codec.Part{Kind: codec.PartImage, MediaType: b("image/png"), Text: b("iVBO")})
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: b("toolu_02"), IsError: true, Children: 1})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: b("no clock")})
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: b("call_3"), Children: 0})
	r.AddPart(codec.Part{Kind: codec.PartText, Text: b("And tomorrow?")})
	r.Tools = append(r.Tools, codec.Tool{Name: b("get_weather"), Schema: b(`{"type":"object"}`)})
	f(r, `{"model":"m","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"Weather?"},`+
		`{"role":"assistant","content":"Checking.","tool_calls":[`+
		`{"id":"toolu_01","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"q\":\"a \\\"b\\\" c\"}"}},`+
		`{"id":"toolu_02","type":"function","function":{"name":"now","arguments":"{}"}},`+
		`{"id":"call_3","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n\"}"}}]},`+
		`{"role":"tool","tool_call_id":"toolu_01","content":"18C"},{"role":"tool","tool_call_id":"toolu_02","content":"Error: no clock"},{"role":"tool","tool_call_id":"call_3","content":""},`+
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},{"type":"text","text":"And tomorrow?"}]}],`+
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"parallel_tool_calls":false,`+
		`"tool_choice":{"type":"function","function":{"name":"get_weather"}},"max_completion_tokens":64000,"reasoning_effort":"low"}`)

	// A user message of only tool results writes no user message; an empty
	// message still writes valid content; no tools -> no parallel flag.
	// json_object goes out when the text says JSON, else it is left out
	// (OpenAI refuses it).
	r = &codec.Request{Parallel: 1, Stream: true, Format: codec.Format{Kind: codec.FormatJSONObject}, System: [][]byte{b("Reply in Json.")}}
	r.AddMessage(codec.RoleUser)
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: b("t1"), Children: 5}) // clamped
	r.AddPart(codec.Part{Kind: codec.PartText, Text: b("ok")})
	r.AddMessage(codec.RoleUser)
	r.AddMessage(codec.RoleAssistant)
	f(r, `{"model":"m","messages":[{"role":"system","content":"Reply in Json."},{"role":"tool","tool_call_id":"t1","content":"ok"},{"role":"user","content":""},{"role":"assistant","content":""}],`+
		`"response_format":{"type":"json_object"},"stream":true,"stream_options":{"include_usage":true}}`)
	r.System = nil
	f(r, `{"model":"m","messages":[{"role":"tool","tool_call_id":"t1","content":"ok"},{"role":"user","content":""},{"role":"assistant","content":""}],`+
		`"stream":true,"stream_options":{"include_usage":true}}`)
}

func TestChatAppendQuotedCompact(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got := ChatAppendQuotedCompact(nil, []byte(in))
		if string(got) != want {
			t.Fatalf("got %s want %s", got, want)
		}
		// The string's content must be the compacted JSON.
		if s := gjson.Parse(string(got)).Str; s != string(codec.Compact(nil, []byte(in))) {
			t.Fatalf("content %q is not the compacted input", s)
		}
	}
	f(`{}`, `"{}"`)
	f(` { "a" : [1, 2] } `, `"{\"a\":[1,2]}"`)
	f(`{"a":"x \"y\" \\ \n é"}`, `"{\"a\":\"x \\\"y\\\" \\\\ \\n é\"}"`)
}

// TestAppendChatRequestFiles round-trips realistic Chat requests
// (testdata/chat/request_*.json) into golden upstream requests.
func TestAppendChatRequestFiles(t *testing.T) {
	f := func(name string) {
		t.Helper()
		var r codec.Request
		if err := DecodeChatRequest(&r, chatReadTestdata(t, name+".json")); err != nil {
			t.Fatal(err)
		}
		out, err := AppendChatRequest(nil, &r, []byte("upstream-model"))
		if err != nil {
			t.Fatal(err)
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		chatGolden(t, name+".out", string(out)+"\n")
	}
	f("request_sdk")
	f("request_agent")
	f("request_custom")
}
