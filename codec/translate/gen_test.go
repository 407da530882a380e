package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// obj is a JSON object that keeps its key order, so generated requests
// look like what clients send (model first, messages before tools ...).
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ccTools are Claude Code's tool names; each gets a schema shaped like the
// real ones ($schema, several typed properties, required, no extras).
var ccTools = []string{
	"Task", "Bash", "Glob", "Grep", "ExitPlanMode", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit",
	"WebFetch", "TodoWrite", "WebSearch", "BashOutput", "KillShell", "SlashCommand", "ListMcpResources",
	"ReadMcpResource", "AskUserQuestion", "Skill",
}

func ccTool(name string, i int) obj {
	props := obj{
		{"file_path", obj{{"type", "string"}, {"description", "Absolute path"}}},
		{"limit", obj{{"type", "number"}}},
	}
	if i%3 == 0 {
		props = append(props, kv{"mode", obj{{"type", "string"}, {"enum", []string{"content", "count"}}}})
	}
	return obj{
		{"name", name},
		{"description", fmt.Sprintf("Runs %s; paths must be absolute.", name)},
		{"input_schema", obj{
			{"type", "object"},
			{"properties", props},
			{"required", []string{"file_path"}},
			{"additionalProperties", false},
			{"$schema", "http://json-schema.org/draft-07/schema#"},
		}},
	}
}

// claudeCodeRequest generates an Anthropic request shaped like Claude
// Code's: the billing line and two system blocks, the tool list, then
// turns of user text, assistant thinking + text + tool_use, and user
// tool_result carrying resultSize bytes of file content. tools caps the
// tool count.
func claudeCodeRequest(tools, turns, resultSize int) []byte {
	system := []obj{
		{{"type", "text"}, {"text", "x-anthropic-billing-header: cc_version=2.1.197.a1b; cc_entrypoint=cli; cch=7f3e2;"}},
		{{"type", "text"}, {"text", "You are Claude Code, Anthropic's official CLI for Claude."}, {"cache_control", obj{{"type", "ephemeral"}}}},
		{{"type", "text"}, {"text", "You are an interactive CLI tool that helps users with software engineering tasks.\n\n# Tone and style\nBe concise, direct, and to the point. Use tools to read files before editing them."}, {"cache_control", obj{{"type", "ephemeral"}}}},
	}
	var ts []obj
	for i, name := range ccTools[:min(tools, len(ccTools))] {
		ts = append(ts, ccTool(name, i))
	}
	content := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) {\n\tw.Write([]byte(\"ok\\t\\\"quoted\\\"\"))\n}\n", resultSize/80+1)[:resultSize]
	msgs := []obj{{{"role", "user"}, {"content", []obj{
		{{"type", "text"}, {"text", "<system-reminder>\nAs you answer the user's questions, you can use the following context: the working directory is /home/dev/app.\n</system-reminder>"}},
		{{"type", "text"}, {"text", "Find where the HTTP handler writes its response and make it return JSON instead."}},
	}}}}
	for t := 0; t < turns; t++ {
		id := fmt.Sprintf("toolu_01%022d", t)
		msgs = append(msgs,
			obj{{"role", "assistant"}, {"content", []obj{
				{{"type", "thinking"}, {"thinking", "I should read the handler file before changing it."}, {"signature", "EqQBCkYIBxgCKkDx1pXyC3pT0m2Vb9Qd0n8v8Vx7bX6oP5bJ2yQpG7k1uYx3T4hQ9sYkZt2Lr8nMw0vB4cE5aF6dG7hJ8iK9lM0nOp"}},
				{{"type", "text"}, {"text", "Let me read the file."}},
				{{"type", "tool_use"}, {"id", id}, {"name", "Read"}, {"input", obj{{"file_path", fmt.Sprintf("/home/dev/app/handler_%d.go", t)}, {"limit", 200}}}},
			}}},
			obj{{"role", "user"}, {"content", []obj{
				{{"type", "tool_result"}, {"tool_use_id", id}, {"content", content}},
			}}},
		)
	}
	req := obj{
		{"model", "claude-sonnet-4-5-20250929"},
		{"messages", msgs},
		{"system", system},
		{"tools", ts},
		{"metadata", obj{{"user_id", "{\"session_id\":\"5b1c0a52-9f7e-4a83-8f0e-2d9a1c3b7e10\"}"}}},
		{"max_tokens", 32000},
		{"thinking", obj{{"type", "enabled"}, {"budget_tokens", 8192}}},
		{"stream", true},
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return b
}

// benchRequest is the 10.8 KB Claude-Code-shaped request of the benchmark.
func benchRequest() []byte { return claudeCodeRequest(20, 3, 450) }

// bigRequest is a ~2 MB agent session: many turns with file contents.
func bigRequest() []byte { return claudeCodeRequest(20, 200, 8500) }
