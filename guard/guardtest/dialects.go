package guardtest

import (
	"math/rand/v2"
	"strconv"
)

// toolNames are the names agents in each dialect give the three tools.
var toolNames = map[string][3]string{
	DialectAnthropic: {"Read", "Write", "Bash"},
	DialectChat:      {"read_file", "write_file", "run_shell"},
	DialectResponses: {"read_file", "write_file", "shell"},
	DialectGemini:    {"read_file", "write_file", "run_shell_command"},
}

func toolName(dialect, tool string) string {
	names, ok := toolNames[dialect]
	if !ok {
		panic("guardtest: unknown dialect " + strconv.Quote(dialect))
	}
	switch tool {
	case "read":
		return names[0]
	case "write":
		return names[1]
	}
	return names[2]
}

// schema is the JSON Schema of a tool's parameters.
func schema(tool string) obj {
	str := obj{{"type", "string"}}
	switch tool {
	case "read":
		return obj{{"type", "object"}, {"properties", obj{{"file_path", str}}}, {"required", []any{"file_path"}}}
	case "write":
		return obj{{"type", "object"}, {"properties", obj{{"file_path", str}, {"content", str}}}, {"required", []any{"file_path", "content"}}}
	}
	return obj{{"type", "object"}, {"properties", obj{{"command", str}}}, {"required", []any{"command"}}}
}

// argsString is tool-call arguments as a model writes them in OpenAI's
// dialects: compact JSON in a string.
func argsString(args obj) string { return string(encodeJSON(nil, args, escapePlain)) }

func callID(r *rand.Rand, prefix string) string { return prefix + randString(r, alnumChars, 24) }

// body writes the conversation in dialect; ws writes the Responses
// WebSocket response.create frame.
func (c *convo) body(dialect string, ws bool) obj {
	switch dialect {
	case DialectAnthropic:
		return c.anthropic()
	case DialectChat:
		return c.chat()
	case DialectResponses:
		return c.responses(ws)
	case DialectGemini:
		return c.gemini()
	}
	panic("guardtest: unknown dialect " + strconv.Quote(dialect))
}

func (c *convo) anthropic() obj {
	var tools []any
	for _, t := range []string{"read", "write", "shell"} {
		tools = append(tools, obj{{"name", toolName(DialectAnthropic, t)}, {"description", "The " + t + " tool."}, {"input_schema", schema(t)}})
	}
	msgs := []any{obj{{"role", "user"}, {"content", []any{obj{{"type", "text"}, {"text", c.task}}}}}}
	for i, s := range c.steps {
		id := callID(c.r, "toolu_01")
		msgs = append(msgs, obj{{"role", "assistant"}, {"content", []any{
			obj{{"type", "text"}, {"text", s.say}},
			obj{{"type", "tool_use"}, {"id", id}, {"name", toolName(DialectAnthropic, s.tool)}, {"input", s.args}},
		}}})
		result := s.result
		if s.numbered {
			result = numberLines(result)
		}
		var content any = result
		if i%2 == 1 {
			content = []any{obj{{"type", "text"}, {"text", result}}}
		}
		blocks := []any{obj{{"type", "tool_result"}, {"tool_use_id", id}, {"content", content}}}
		if s.userText != "" {
			blocks = append(blocks, obj{{"type", "text"}, {"text", s.userText}})
		}
		msgs = append(msgs, obj{{"role", "user"}, {"content", blocks}})
	}
	return obj{
		{"model", "claude-sonnet-4-5"}, {"max_tokens", 64000},
		{"system", []any{
			obj{{"type", "text"}, {"text", "x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=cli;"}},
			obj{{"type", "text"}, {"text", c.system}, {"cache_control", obj{{"type", "ephemeral"}}}},
		}},
		{"messages", msgs}, {"tools", tools},
		{"metadata", obj{{"user_id", `{"session_id":"` + uuid(c.r) + `"}`}}},
		{"thinking", obj{{"type", "adaptive"}}}, {"stream", true},
	}
}

func (c *convo) chat() obj {
	var tools []any
	for _, t := range []string{"read", "write", "shell"} {
		tools = append(tools, obj{{"type", "function"}, {"function", obj{{"name", toolName(DialectChat, t)}, {"description", "The " + t + " tool."}, {"parameters", schema(t)}}}})
	}
	msgs := []any{obj{{"role", "system"}, {"content", c.system}}, obj{{"role", "user"}, {"content", c.task}}}
	for _, s := range c.steps {
		id := callID(c.r, "call_")
		msgs = append(msgs,
			obj{{"role", "assistant"}, {"content", s.say}, {"tool_calls", []any{obj{{"id", id}, {"type", "function"},
				{"function", obj{{"name", toolName(DialectChat, s.tool)}, {"arguments", argsString(s.args)}}}}}}},
			obj{{"role", "tool"}, {"tool_call_id", id}, {"content", s.result}})
		if s.userText != "" {
			msgs = append(msgs, obj{{"role", "user"}, {"content", []any{obj{{"type", "text"}, {"text", s.userText}}}}})
		}
	}
	return obj{{"model", "gpt-4.1"}, {"messages", msgs}, {"tools", tools}, {"tool_choice", "auto"},
		{"stream", true}, {"stream_options", obj{{"include_usage", true}}}}
}

func (c *convo) responses(ws bool) obj {
	var tools []any
	for _, t := range []string{"read", "write", "shell"} {
		tools = append(tools, obj{{"type", "function"}, {"name", toolName(DialectResponses, t)}, {"description", "The " + t + " tool."}, {"strict", false}, {"parameters", schema(t)}})
	}
	input := []any{
		obj{{"type", "message"}, {"role", "developer"}, {"content", []any{obj{{"type", "input_text"}, {"text", c.system}}}}},
		obj{{"type", "message"}, {"role", "user"}, {"content", []any{obj{{"type", "input_text"}, {"text", c.task}}}}},
	}
	for i, s := range c.steps {
		id := callID(c.r, "call_")
		output := s.result
		if s.tool == "shell" && i%2 == 0 {
			// Codex's shell tool wraps its output in JSON.
			output = string(encodeJSON(nil, obj{{"output", s.result}, {"metadata", obj{{"exit_code", 0}, {"duration_seconds", rawJSON("0.3")}}}}, escapePlain))
		}
		input = append(input,
			obj{{"type", "message"}, {"role", "assistant"}, {"content", []any{obj{{"type", "output_text"}, {"text", s.say}}}}},
			obj{{"type", "function_call"}, {"call_id", id}, {"name", toolName(DialectResponses, s.tool)}, {"arguments", argsString(s.args)}},
			obj{{"type", "function_call_output"}, {"call_id", id}, {"output", output}})
		if s.userText != "" {
			input = append(input, obj{{"type", "message"}, {"role", "user"}, {"content", []any{obj{{"type", "input_text"}, {"text", s.userText}}}}})
		}
	}
	thread := uuid(c.r)
	body := obj{{"model", "gpt-5-codex"}}
	if ws {
		body = obj{{"type", "response.create"}, {"model", "gpt-5-codex"}}
	}
	body = append(body, obj{{"input", input}, {"tools", tools}, {"tool_choice", "auto"}, {"parallel_tool_calls", false},
		{"reasoning", obj{{"effort", "medium"}, {"summary", "auto"}}}, {"store", false}, {"stream", true},
		{"include", []any{"reasoning.encrypted_content"}}, {"prompt_cache_key", thread}}...)
	if ws {
		body = append(body, member{"client_metadata", obj{{"session_id", thread}, {"thread_id", thread}, {"turn_id", uuid(c.r)},
			{"x-codex-turn-metadata", `{"request_kind":"turn","sandbox":"workspace-write"}`}}})
	}
	return body
}

func (c *convo) gemini() obj {
	var decls []any
	for _, t := range []string{"read", "write", "shell"} {
		decls = append(decls, obj{{"name", toolName(DialectGemini, t)}, {"description", "The " + t + " tool."}, {"parametersJsonSchema", schema(t)}})
	}
	contents := []any{obj{{"role", "user"}, {"parts", []any{obj{{"text", c.task}}}}}}
	for _, s := range c.steps {
		name := toolName(DialectGemini, s.tool)
		contents = append(contents,
			obj{{"role", "model"}, {"parts", []any{obj{{"text", s.say}}, obj{{"functionCall", obj{{"name", name}, {"args", s.args}}}}}}})
		parts := []any{obj{{"functionResponse", obj{{"name", name}, {"response", obj{{"output", s.result}}}}}}}
		if s.userText != "" {
			parts = append(parts, obj{{"text", s.userText}})
		}
		contents = append(contents, obj{{"role", "user"}, {"parts", parts}})
	}
	return obj{{"systemInstruction", obj{{"parts", []any{obj{{"text", c.system}}}}}}, {"contents", contents},
		{"tools", []any{obj{{"functionDeclarations", decls}}}},
		{"generationConfig", obj{{"maxOutputTokens", 8192}, {"thinkingConfig", obj{{"thinkingBudget", -1}}}}}}
}
