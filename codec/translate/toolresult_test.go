package translate

import (
	"testing"

	"slipstream/codec"
)

// TestToolResultShapes reads the tool-result shapes Gemini CLI, OpenCode
// (its @ai-sdk provider packages), Qwen Code and pi send on each dialect,
// and checks that the result's text, written for every other dialect and
// read back, is the tool's output and not its client-side wrapper.
func TestToolResultShapes(t *testing.T) {
	f := func(client codec.Dialect, body, wantText string, wantErr bool) {
		t.Helper()
		r := new(codec.Request)
		if err := DecodeRequest(client, r, []byte(body)); err != nil {
			t.Fatalf("%s: cannot decode: %s\n%s", client, err, body)
		}
		stamp(r, client)
		text, isErr := resultText(t, r)
		if text != wantText || isErr != wantErr {
			t.Errorf("%s: result %q err=%v, want %q err=%v", client, text, isErr, wantText, wantErr)
		}
		for _, up := range allDialects {
			if up == client {
				continue
			}
			out, err := AppendRequest(up, nil, r, upstreamModels[up])
			if err != nil {
				t.Fatalf("%s to %s: cannot write: %s", client, up, err)
			}
			back := new(codec.Request)
			if err := DecodeRequest(up, back, out); err != nil {
				t.Fatalf("%s to %s: cannot read back: %s\n%s", client, up, err, out)
			}
			want := wantText
			if wantErr && (up == codec.DialectChat || up == codec.DialectResponses) {
				want = "Error: " + want // OpenAI has no error flag on results
			}
			if got, _ := resultText(t, back); got != want {
				t.Errorf("%s to %s: the model reads %q, want %q\n%s", client, up, got, want, out)
			}
		}
	}
	geminiCall := `{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"bash","args":{"command":"ls"}}}]},`
	// OpenCode (@ai-sdk/google): {name, content} with text or a JSON output.
	f(codec.DialectGemini, `{"contents":[{"role":"user","parts":[{"text":"list"}]},`+geminiCall+
		`{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"bash","response":{"name":"bash","content":"a.go\nb.go"}}}]}]}`,
		"a.go\nb.go", false)
	f(codec.DialectGemini, `{"contents":[{"role":"user","parts":[{"text":"list"}]},`+geminiCall+
		`{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"bash","response":{"name":"bash","content":{"files":["a.go","b.go"]}}}}]}]}`,
		`{"files":["a.go","b.go"]}`, false)
	// Gemini CLI and pi: {output} and {error}, no ids.
	f(codec.DialectGemini, `{"contents":[{"role":"user","parts":[{"text":"list"}]},{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]},`+
		`{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"Command: ls\nStdout: a.go"}}}]}]}`,
		"Command: ls\nStdout: a.go", false)
	f(codec.DialectGemini, `{"contents":[{"role":"user","parts":[{"text":"list"}]},`+geminiCall+
		`{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"bash","response":{"error":"ls: cannot access 'x': No such file"}}}]}]}`,
		"ls: cannot access 'x': No such file", true)
	chatCall := `{"role":"user","content":"list"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},`
	// Qwen Code and pi on Chat: a string; OpenCode (openai-compatible): text parts.
	f(codec.DialectChat, `{"model":"m","messages":[`+chatCall+`{"role":"tool","tool_call_id":"call_1","content":"a.go\nb.go"}]}`,
		"a.go\nb.go", false)
	f(codec.DialectChat, `{"model":"m","messages":[`+chatCall+`{"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"a.go\nb.go"}]}]}`,
		"a.go\nb.go", false)
	respCall := `{"role":"user","content":[{"type":"input_text","text":"list"}]},{"type":"function_call","call_id":"call_1","name":"bash","arguments":"{\"command\":\"ls\"}"},`
	// OpenCode (@ai-sdk/openai) and pi on Responses: a string, or input_text parts.
	f(codec.DialectResponses, `{"model":"m","input":[`+respCall+`{"type":"function_call_output","call_id":"call_1","output":"a.go\nb.go"}]}`,
		"a.go\nb.go", false)
	f(codec.DialectResponses, `{"model":"m","input":[`+respCall+`{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"a.go\nb.go"}]}]}`,
		"a.go\nb.go", false)
	antCall := `{"role":"user","content":"list"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}}]},`
	// OpenCode (@ai-sdk/anthropic) and pi on Anthropic: text blocks, is_error.
	f(codec.DialectAnthropic, `{"model":"m","max_tokens":100,"messages":[`+antCall+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.go\nb.go"}]}]}]}`,
		"a.go\nb.go", false)
	f(codec.DialectAnthropic, `{"model":"m","max_tokens":100,"messages":[`+antCall+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"exit status 2","is_error":true}]}]}`,
		"exit status 2", true)
}

// resultText returns the unescaped text of the first tool result of r and
// its error flag.
func resultText(t *testing.T, r *codec.Request) (string, bool) {
	t.Helper()
	for i := range r.Parts {
		p := &r.Parts[i]
		if p.Kind != codec.PartToolResult {
			continue
		}
		var b []byte
		for _, c := range r.Parts[i+1 : i+1+p.Children] {
			if c.Kind != codec.PartText {
				continue
			}
			var err error
			if b, err = codec.AppendUnescaped(b, c.Text); err != nil {
				t.Fatalf("cannot unescape %q: %s", c.Text, err)
			}
		}
		return string(b), p.IsError
	}
	t.Fatal("no tool result")
	return "", false
}
