package anthropic

import (
	"fmt"
	"strings"
	"testing"

	"slipstream/codec"
)

// dumpRequest renders the neutral request compactly for f-tests.
func dumpRequest(r *codec.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model=%s stream=%v max=%d", r.Model, r.Stream, r.MaxTokens)
	for _, s := range r.System {
		fmt.Fprintf(&b, " sys=%q", s)
	}
	for i, m := range r.Messages {
		fmt.Fprintf(&b, " | %s:", [...]string{"user", "assistant", "system"}[m.Role])
		for _, p := range r.MessageParts(i) {
			b.WriteString(" ")
			b.WriteString(dumpPart(&p))
		}
	}
	for _, t := range r.Tools {
		fmt.Fprintf(&b, " tool=%s(%s)", t.Name, t.Schema)
	}
	if r.ToolChoice.Mode != codec.ToolChoiceUnset {
		fmt.Fprintf(&b, " choice=%d%s", r.ToolChoice.Mode, r.ToolChoice.Name)
	}
	if r.Parallel != 0 {
		fmt.Fprintf(&b, " parallel=%d", r.Parallel)
	}
	if r.Temperature != nil || r.TopP != nil || r.TopK != nil {
		fmt.Fprintf(&b, " t=%s p=%s k=%s", r.Temperature, r.TopP, r.TopK)
	}
	for _, s := range r.Stop {
		fmt.Fprintf(&b, " stop=%s", s)
	}
	if r.Reasoning != (codec.Reasoning{}) {
		fmt.Fprintf(&b, " effort=%d budget=%d summary=%v", r.Reasoning.Effort, r.Reasoning.Budget, r.Reasoning.Summary)
	}
	if r.Format.Kind != codec.FormatUnset {
		fmt.Fprintf(&b, " format=%d:%s", r.Format.Kind, r.Format.Schema)
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
	case codec.PartRedactedThinking:
		return "redacted:" + string(p.Signature)
	}
	return "?"
}

func TestDecodeRequest(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		if err := DecodeRequest(&r, []byte(body)); err != nil {
			t.Fatalf("DecodeRequest(%s): %v", body, err)
		}
		if got := dumpRequest(&r); got != want {
			t.Fatalf("DecodeRequest(%s)\ngot  %s\nwant %s", body, got, want)
		}
	}
	// plain text
	f(`{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Hi"}]}`,
		`model=claude-sonnet-4-5 stream=false max=1024 | user: text:Hi`)
	// Claude Code: billing line stripped, system blocks kept in order, escapes kept verbatim
	f(`{"model":"m","max_tokens":64000,"stream":true,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1; cch=1;"},{"type":"text","text":"You are Claude Code.\nBe terse.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"say \"hi\""}]}]}`,
		`model=m stream=true max=64000 sys="You are Claude Code.\\nBe terse." | user: text:say \"hi\"`)
	// a leading system message is hoisted, a later one stays a RoleSystem turn
	f(`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"first"},{"role":"user","content":"q"},{"role":"system","content":[{"type":"text","text":"later"}]},{"role":"user","content":"q2"}]}`,
		`model=m stream=false max=1 sys="first" | user: text:q | system: text:later | user: text:q2`)
	// tool round trip with thinking, image, result name looked up
	f(`{"model":"m","max_tokens":2048,"messages":[
		{"role":"user","content":[{"type":"text","text":"Weather?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"Need tool.","signature":"EqQB"},{"type":"redacted_thinking","data":"ZZZ"},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"18C","is_error":true,"cache_control":{"type":"ephemeral"}},{"type":"text","text":"And tomorrow?"}]}],
		"tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],
		"tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true}}`,
		`model=m stream=false max=2048 | user: text:Weather? image:image/png,iVBO, | assistant: thinking:Need tool.,EqQB redacted:ZZZ call:toolu_01,get_weather,{"city":"Paris"} | user: result:toolu_01,get_weather,err=true,children=1 text:18C text:And tomorrow? tool=get_weather({"type":"object"}) choice=4get_weather parallel=-1`)
	// tool_result with block content, url image, server blocks dropped
	f(`{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"tool_use","id":"t1","name":"n","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}]}`,
		`model=m stream=false max=5 | assistant: call:t1,n,{} | user: result:t1,n,err=false,children=2 text:a image:,,https://x/y.png`)
	// sampling, stop, thinking budget -> effort bucket, structured output
	f(`{"model":"m","max_tokens":9000,"temperature":0.5,"top_p":0.9,"top_k":40,"stop_sequences":["END","\n\n"],"thinking":{"type":"enabled","budget_tokens":8000},"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}},"messages":[]}`,
		`model=m stream=false max=9000 t=0.5 p=0.9 k=40 stop=END stop=\n\n effort=4 budget=8000 summary=true format=3:{"type":"object"}`)
	// Claude Code's adaptive thinking with output_config.effort
	f(`{"model":"m","max_tokens":64000,"thinking":{"type":"adaptive"},"output_config":{"effort":"medium"},"messages":[]}`,
		`model=m stream=false max=64000 effort=4 budget=-1 summary=true`)
	f(`{"model":"m","max_tokens":64000,"thinking":{"type":"adaptive","display":"omitted"},"messages":[]}`,
		`model=m stream=false max=64000 effort=5 budget=-1 summary=false`)
	f(`{"model":"m","max_tokens":64000,"thinking":{"type":"disabled"},"messages":[]}`,
		`model=m stream=false max=64000 effort=1 budget=0 summary=false`)
	// plain-text documents become text; PDFs are dropped
	f(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}`,
		`model=m stream=false max=1 | user: text:doc`)
}

func TestDecodeRequestErrors(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var r codec.Request
		err := DecodeRequest(&r, []byte(body))
		if err == nil || err.Error() != want {
			t.Fatalf("DecodeRequest(%s): got %v, want %q", body, err, want)
		}
	}
	f(`[]`, `cannot read request: body is not a JSON object`)
	f(`{"messages":{}}`, `messages: must be an array`)
	f(`{"messages":[{"role":"tool","content":"x"}]}`, `messages[0]: unknown role "tool"`)
	f(`{"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"x"},{"type":"x"}]}]}`,
		`messages[1].content[1]: unknown block type "x"`)
	f(`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`,
		`messages[0].content[0]: image source type "file" cannot be translated`)
	f(`{"system":5,"messages":[]}`, `system: must be a string or an array of text blocks`)
	f(`{"messages":[],"output_config":{"format":{"type":"xml"}}}`, `output_config.format: unsupported type "xml"`)
}
