package gemini

import (
	"fmt"
	"strings"
	"testing"

	"slipstream/codec"
)

// dumpRequest renders the parts of r a test cares about, one item a line.
func dumpRequest(r *codec.Request) string {
	var b strings.Builder
	for _, s := range r.System {
		fmt.Fprintf(&b, "system:%s\n", s)
	}
	for i, m := range r.Messages {
		fmt.Fprintf(&b, "msg%d:%s\n", i, [...]string{"user", "assistant", "system"}[m.Role])
		for _, p := range r.MessageParts(i) {
			b.WriteString("  " + dumpPart(&p) + "\n")
		}
	}
	for _, t := range r.Tools {
		fmt.Fprintf(&b, "tool:%d,%s,%s,%s\n", t.Kind, t.Name, t.Description, t.Schema)
	}
	if r.ToolChoice.Mode != codec.ToolChoiceUnset {
		fmt.Fprintf(&b, "choice:%d,%s\n", r.ToolChoice.Mode, r.ToolChoice.Name)
	}
	if r.MaxTokens != 0 || r.Temperature != nil || r.TopP != nil || r.TopK != nil || r.N != 0 {
		fmt.Fprintf(&b, "gen:max=%d,temp=%s,topP=%s,topK=%s,n=%d\n", r.MaxTokens, r.Temperature, r.TopP, r.TopK, r.N)
	}
	for _, s := range r.Stop {
		fmt.Fprintf(&b, "stop:%s\n", s)
	}
	if rs := r.Reasoning; rs != (codec.Reasoning{}) {
		fmt.Fprintf(&b, "reasoning:effort=%d,budget=%d,summary=%v\n", rs.Effort, rs.Budget, rs.Summary)
	}
	if f := r.Format; f.Kind != codec.FormatUnset {
		fmt.Fprintf(&b, "format:%d,%s,%s\n", f.Kind, f.Name, f.Schema)
	}
	return b.String()
}

func dumpPart(p *codec.Part) string {
	switch p.Kind {
	case codec.PartText:
		return "text:" + string(p.Text)
	case codec.PartImage:
		return fmt.Sprintf("image:%s,%s,%s", p.MediaType, p.Text, p.URL)
	case codec.PartToolCall:
		return fmt.Sprintf("call:%s,%s,%s", p.ID, p.Name, p.Args)
	case codec.PartToolResult:
		return fmt.Sprintf("result:%s,%s,err=%v,children=%d", p.ID, p.Name, p.IsError, p.Children)
	case codec.PartThinking:
		return fmt.Sprintf("thinking:%s,%s", p.Text, p.Signature)
	}
	return fmt.Sprintf("kind%d", p.Kind)
}

func TestDecodeRequest(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		if err := DecodeRequest(&r, []byte(body)); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := dumpRequest(&r); got != want {
			t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", body, got, want)
		}
	}
	// What @google/genai sends for a one-line prompt.
	f(`{"contents":[{"parts":[{"text":"Hi"}],"role":"user"}]}`, "msg0:user\n  text:Hi\n")
	// snake_case, system instruction, inline image, escapes kept verbatim.
	f(`{"system_instruction":{"parts":[{"text":"Be terse."},{"text":"No \"fluff\"."}]},
	  "contents":[{"role":"user","parts":[{"text":"What is\nthis?"},{"inline_data":{"mime_type":"image/png","data":"iVBO"}}]}],
	  "generation_config":{"max_output_tokens":100,"temperature":0.2,"top_p":0.9,"top_k":40,"stop_sequences":["END"]}}`,
		"system:Be terse.\nsystem:No \\\"fluff\\\".\nmsg0:user\n  text:What is\\nthis?\n  image:image/png,iVBO,\n"+
			"gen:max=100,temp=0.2,topP=0.9,topK=40,n=0\nstop:END\n")
	// Function calls without ids get call_<n>; responses pair by name in order.
	f(`{"contents":[{"role":"user","parts":[{"text":"Weather?"}]},
	  {"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiQB"},
	    {"functionCall":{"name":"get_weather","args":{"city":"Rome"}}},{"functionCall":{"name":"time","args":{}}}]},
	  {"role":"user","parts":[{"functionResponse":{"name":"time","response":{"output":"noon"}}},
	    {"functionResponse":{"name":"get_weather","response":{"output":"18C"}}},
	    {"functionResponse":{"name":"get_weather","response":{"temp":21, "unit":"C"}}}]},
	  {"role":"model","parts":[{"text":"Done."}]}]}`,
		"msg0:user\n  text:Weather?\nmsg1:assistant\n  thinking:,CiQB\n  call:call_0,get_weather,{\"city\":\"Paris\"}\n"+
			"  call:call_1,get_weather,{\"city\":\"Rome\"}\n  call:call_2,time,{}\nmsg2:user\n"+
			"  result:call_2,time,err=false,children=1\n  text:noon\n"+
			"  result:call_0,get_weather,err=false,children=1\n  text:18C\n"+
			"  result:call_1,get_weather,err=false,children=1\n  text:{\\\"temp\\\":21,\\\"unit\\\":\\\"C\\\"}\n"+
			"msg3:assistant\n  text:Done.\n")
	// Explicit ids win; errors set IsError; legacy function role is user.
	f(`{"contents":[{"role":"model","parts":[{"function_call":{"id":"abc","name":"run","args":{"cmd":"ls"}}}]},
	  {"role":"function","parts":[{"function_response":{"id":"abc","name":"run","response":{"error":"denied"}}}]}]}`,
		"msg0:assistant\n  call:abc,run,{\"cmd\":\"ls\"}\nmsg1:user\n  result:abc,run,err=true,children=1\n  text:denied\n")
	// An unanswered response mints a fresh id; an error object is compacted.
	f(`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"x","response":{"error":{"code": 1}}}}]}]}`,
		"msg0:user\n  result:call_0,x,err=true,children=1\n  text:{\\\"error\\\":{\\\"code\\\":1}}\n")
	// @ai-sdk/google (OpenCode) wraps results as {name, content}: text,
	// JSON output, and Gemini 3 multimodal parts (inline and file data).
	f(`{"contents":[{"role":"model","parts":[{"functionCall":{"id":"c1","name":"bash","args":{}}},{"functionCall":{"id":"c2","name":"read","args":{}}},{"functionCall":{"id":"c3","name":"shot","args":{}}}]},
	  {"role":"user","parts":[{"functionResponse":{"id":"c1","name":"bash","response":{"name":"bash","content":"a.go\nb.go"}}},
	    {"functionResponse":{"id":"c2","name":"read","response":{"name":"read","content":{"lines": 3}}}},
	    {"functionResponse":{"id":"c3","name":"shot","response":{"name":"shot","content":"Tool executed successfully."},
	      "parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"}},{"fileData":{"mimeType":"image/jpeg","fileUri":"gs://b/s.jpg"}}]}}]}]}`,
		"msg0:assistant\n  call:c1,bash,{}\n  call:c2,read,{}\n  call:c3,shot,{}\nmsg1:user\n"+
			"  result:c1,bash,err=false,children=1\n  text:a.go\\nb.go\n"+
			"  result:c2,read,err=false,children=1\n  text:{\\\"lines\\\":3}\n"+
			"  result:c3,shot,err=false,children=3\n  text:Tool executed successfully.\n  image:image/png,iVBO,\n  image:image/jpeg,,gs://b/s.jpg\n")
	// Anything else beside name stays the whole object.
	f(`{"contents":[{"role":"user","parts":[{"functionResponse":{"id":"c","name":"x","response":{"name":"x","content":"a","exit":1}}}]}]}`,
		"msg0:user\n  result:c,x,err=false,children=1\n  text:{\\\"name\\\":\\\"x\\\",\\\"content\\\":\\\"a\\\",\\\"exit\\\":1}\n")
	// Thoughts, the trailing empty signed text of Gemini 3, fileData.
	f(`{"contents":[{"role":"user","parts":[{"fileData":{"mimeType":"image/jpeg","fileUri":"gs://b/cat.jpg"}}]},
	  {"role":"model","parts":[{"text":"Planning","thought":true,"thoughtSignature":"S1"},{"text":"Answer"},{"text":"","thoughtSignature":"S2"}]}]}`,
		"msg0:user\n  image:image/jpeg,,gs://b/cat.jpg\nmsg1:assistant\n  thinking:Planning,S1\n  text:Answer\n  thinking:,S2\n")
	// Consecutive user contents merge; code execution parts are dropped.
	f(`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"b"},{"executableCode":{"code":"1"}}]}]}`,
		"msg0:user\n  text:a\n  text:b\n")
	// Tools: JSON schema kept, OpenAPI types lowercased, other tools dropped.
	f(`{"contents":[],"tools":[{"functionDeclarations":[
	    {"name":"a","description":"A","parametersJsonSchema":{"type":"object"}},
	    {"name":"b","parameters":{"type":"OBJECT","properties":{"type":{"type":"STRING"}}}}]},
	  {"googleSearch":{}}],
	  "toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["b"]}}}`,
		"tool:0,a,A,{\"type\":\"object\"}\ntool:0,b,,{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"}}}\n"+
			"choice:4,b\n")
	f(`{"tool_config":{"function_calling_config":{"mode":"NONE"}}}`, "choice:3,\n")
	// Thinking and structured output.
	f(`{"generationConfig":{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true},
	  "responseMimeType":"application/json","responseJsonSchema":{"type":"object"}}}`,
		"reasoning:effort=4,budget=8192,summary=true\nformat:3,response,{\"type\":\"object\"}\n")
	f(`{"generationConfig":{"thinkingConfig":{"thinkingLevel":"high"},"responseSchema":{"type":"ARRAY"}}}`,
		"reasoning:effort=5,budget=0,summary=false\nformat:3,response,{\"type\":\"array\"}\n")
	f(`{"generationConfig":{"thinkingConfig":{"thinkingBudget":0},"responseMimeType":"application/json","candidateCount":2}}`,
		"gen:max=0,temp=,topP=,topK=,n=2\nreasoning:effort=1,budget=0,summary=false\nformat:2,,\n")
	f(`{"generationConfig":{"thinkingConfig":{"thinkingBudget":-1}}}`, "reasoning:effort=0,budget=-1,summary=false\n")
}

func TestDecodeRequestErrors(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		err := DecodeRequest(&r, []byte(body))
		if err == nil || err.Error() != want {
			t.Fatalf("%s: got %v, want %s", body, err, want)
		}
	}
	f(`[]`, "cannot read request: body is not a JSON object")
	f(`{"contents":{}}`, "contents: must be an array")
	f(`{"contents":[1]}`, "contents[0]: must be an object")
	f(`{"contents":[{"role":"robot","parts":[]}]}`, `contents[0].role: unknown role "robot"`)
	f(`{"contents":[{"parts":[{"text":"a"},{"toolCall":{}}]}]}`, `contents[0].parts[1]: unsupported part "toolCall"`)
}
