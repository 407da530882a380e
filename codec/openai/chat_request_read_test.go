package openai

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

func TestDecodeChatRequest(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		if !gjson.Valid(body) {
			t.Fatalf("test body is not valid JSON: %s", body)
		}
		var r codec.Request
		if err := DecodeChatRequest(&r, []byte(body)); err != nil {
			t.Fatalf("DecodeChatRequest: %v", err)
		}
		if got := chatDumpRequest(&r); got != want {
			t.Fatalf("unexpected request\ngot:\n%s\nwant:\n%s", got, want)
		}
	}

	// Plain text, string content.
	f(`{"model":"gpt-4.1","messages":[{"role":"user","content":"Hi"}]}`,
		"model=gpt-4.1 stream=false usage=false\nuser: text(Hi)\n")

	// A Chat request: leading system and developer hoisted, image data URL
	// split, tool call with a string arguments, tool result.
	f(`{"model":"gpt-4.1","stream":true,"stream_options":{"include_usage":true},"messages":[
  {"role": "system", "content": "You are terse."},
  {"role": "developer", "content": [{"type": "text", "text": "Answer in English."}]},
  {"role": "user", "content": [
    {"type": "text", "text": "What is in this picture?"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo", "detail": "auto"}}
  ]},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "call_7", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
  ]},
  {"role": "tool", "tool_call_id": "call_7", "content": "18C, sunny"}
]}`, `model=gpt-4.1 stream=true usage=true
system You are terse.
system Answer in English.
user: text(What is in this picture?) image(image/png|iVBORw0KGgo|)
assistant: call(call_7,get_weather,"{\"city\":\"Paris\"}",str=true,custom=false)
user: result(call_7,,err=false,n=1) text(18C, sunny)
`)

	// Parallel tool results merge into one user message and the following
	// user message joins it; a later system message stays in place.
	f(`{"model":"m","messages":[
  {"role":"user","content":"weather in Paris and Rome?"},
  {"role":"assistant","content":"Checking.","tool_calls":[
    {"id":"call_1","type":"function","function":{"name":"w","arguments":"{\"city\":\"Paris\"}"}},
    {"id":"call_2","type":"function","function":{"name":"w","arguments":""}}]},
  {"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"18C"},{"type":"text","text":"sunny"}]},
  {"role":"tool","tool_call_id":"call_2","content":""},
  {"role":"user","content":"and tomorrow?"},
  {"role":"system","content":"Be brief."},
  {"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]}
]}`, `model=m stream=false usage=false
user: text(weather in Paris and Rome?)
assistant: text(Checking.) call(call_1,w,"{\"city\":\"Paris\"}",str=true,custom=false) call(call_2,w,"",str=true,custom=false)
user: result(call_1,,err=false,n=2) text(18C) text(sunny) result(call_2,,err=false,n=0) text(and tomorrow?)
system: text(Be brief.)
user: image(||https://x.test/a.png)
`)

	// Sampling, tools, tool_choice, format, effort.
	f(`{"model":"o4","max_completion_tokens":1000,"max_tokens":5,"temperature":0.2,"top_p":1,"n":2,"stop":["END","STOP"],
  "reasoning_effort":"high","parallel_tool_calls":false,
  "tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},
           {"type":"custom","custom":{"name":"apply_patch","description":"Patch files","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}},
           {"type":"web_search"}],
  "tool_choice":{"type":"function","function":{"name":"get_weather"}},
  "response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}},
  "messages":[{"role":"user","content":"x"}]}`,
		`model=o4 stream=false usage=false max=1000 temp=0.2 top_p=1 n=2 effort=5 parallel=-1 choice=4:get_weather format=3:out:{"type":"object"}:true stop="END" stop="STOP"
user: text(x)
tool 0 get_weather "Current weather" {"type":"object","properties":{"city":{"type":"string"}}} strict=true format=
tool 1 apply_patch "Patch files"  strict=false format={"type":"grammar","syntax":"lark","definition":"start: x"}
`)

	// Stop as a string, deprecated max_tokens, string tool_choice, reasoning
	// echoed back on an assistant message, a custom tool call, legacy
	// function_call / function role pairing by name.
	f(`{"model":"m","max_tokens":64,"stop":"\n\n","tool_choice":"required","messages":[
  {"role":"user","content":"go"},
  {"role":"assistant","reasoning_content":"Let me think.","content":"","tool_calls":[
    {"id":"call_9","type":"custom","custom":{"name":"apply_patch","input":"*** Begin Patch\n"}}]},
  {"role":"tool","tool_call_id":"call_9","content":"Done!"},
  {"role":"assistant","function_call":{"name":"lookup","arguments":"{}"}},
  {"role":"function","name":"lookup","content":"found"}
]}`, `model=m stream=false usage=false max=64 choice=2: stop="\\n\\n"
user: text(go)
assistant: thinking(Let me think.|) call(call_9,apply_patch,"*** Begin Patch\n",str=true,custom=true)
user: result(call_9,,err=false,n=1) text(Done!)
assistant: call(lookup,lookup,"{}",str=true,custom=false)
user: result(lookup,lookup,err=false,n=1) text(found)
`)

	// Only system messages: all hoisted. Unknown fields and nulls ignored.
	f(`{"model":"m","messages":[{"role":"system","content":"s"}],"temperature":null,"seed":7,"user":"u","tools":null}`,
		"model=m stream=false usage=false\nsystem s\n")
}

func TestDecodeChatRequestError(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		err := DecodeChatRequest(&r, []byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got error %v, want one containing %q", err, want)
		}
	}
	f(`[]`, "JSON object")
	f(`{"model":"m"}`, "messages")
	f(`{"messages":"hi"}`, "messages")
	f(`{"messages":[1]}`, "messages[0]: must be an object")
	f(`{"messages":[{"role":"user","content":"a"},{"role":"robot","content":"x"}]}`, `messages[1]: unknown role "robot"`)
	f(`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio","input_audio":{}}]}]}`, `messages[0].content[1]: content part type "input_audio" cannot be translated`)
	f(`{"messages":[{"role":"user","content":[{"type":"video"}]}]}`, `messages[0].content[0]: unknown content part type "video"`)
	f(`{"messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, `messages[0].content[0]: image parts are not allowed`)
	f(`{"messages":[{"role":"system","content":[{"type":"image_url"}]}]}`, `messages[0].content[0]: system content part type "image_url"`)
	f(`{"messages":[],"tools":[{"type":"function"}]}`, `tools[0]: function must be an object`)
}
