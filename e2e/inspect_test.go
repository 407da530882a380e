package e2e

import (
	"encoding/json"
	"strings"
)

// toolCall is a tool call found in a request's history.
type toolCall struct{ ID, Name, Args string }

// toolResult is a tool result found in a request's history.
type toolResult struct{ ID, Text string }

// toolNames lists the names of the tools a request offers, nested
// namespace tools included.
func toolNames(dialect string, req map[string]any) []string {
	var names []string
	var walk func(tools []any)
	walk = func(tools []any) {
		for _, x := range tools {
			t, _ := x.(map[string]any)
			if t == nil {
				continue
			}
			if dialect == dialectChat {
				for _, k := range []string{"function", "custom"} {
					if f, ok := t[k].(map[string]any); ok {
						names = append(names, asString(f["name"]))
					}
				}
				continue
			}
			if n := asString(t["name"]); n != "" {
				names = append(names, n)
			}
			if sub, ok := t["tools"].([]any); ok {
				walk(sub)
			}
		}
	}
	tools, _ := req["tools"].([]any)
	if dialect == dialectGemini {
		for _, x := range tools {
			for _, f := range asList(asMap(x)["functionDeclarations"]) {
				names = append(names, asString(asMap(f)["name"]))
			}
		}
		return names
	}
	walk(tools)
	return names
}

// toolHistory returns the tool calls and tool results in a request's
// history, in order.
func toolHistory(dialect string, req map[string]any) (calls []toolCall, results []toolResult) {
	switch dialect {
	case dialectChat:
		for _, x := range asList(req["messages"]) {
			m := asMap(x)
			for _, y := range asList(m["tool_calls"]) {
				c := asMap(y)
				f := asMap(c["function"])
				calls = append(calls, toolCall{asString(c["id"]), asString(f["name"]), asString(f["arguments"])})
			}
			if asString(m["role"]) == "tool" {
				results = append(results, toolResult{asString(m["tool_call_id"]), flatText(m["content"])})
			}
		}
	case dialectResponses:
		for _, x := range asList(req["input"]) {
			m := asMap(x)
			switch asString(m["type"]) {
			case "function_call":
				calls = append(calls, toolCall{asString(m["call_id"]), asString(m["name"]), asString(m["arguments"])})
			case "custom_tool_call":
				calls = append(calls, toolCall{asString(m["call_id"]), asString(m["name"]), asString(m["input"])})
			case "function_call_output", "custom_tool_call_output":
				results = append(results, toolResult{asString(m["call_id"]), flatText(m["output"])})
			}
		}
	case dialectGemini:
		// Gemini calls usually carry no id: they pair by name, so ID is
		// the id when present, else the name.
		for _, x := range asList(req["contents"]) {
			for _, y := range asList(asMap(x)["parts"]) {
				p := asMap(y)
				if fc := asMap(p["functionCall"]); fc != nil {
					args, _ := json.Marshal(fc["args"])
					calls = append(calls, toolCall{firstOf(asString(fc["id"]), asString(fc["name"])), asString(fc["name"]), string(args)})
				}
				if fr := asMap(p["functionResponse"]); fr != nil {
					resp, _ := json.Marshal(fr["response"])
					results = append(results, toolResult{firstOf(asString(fr["id"]), asString(fr["name"])), string(resp)})
				}
			}
		}
	case dialectAnthropic:
		for _, x := range asList(req["messages"]) {
			for _, y := range asList(asMap(x)["content"]) {
				b := asMap(y)
				switch asString(b["type"]) {
				case "tool_use":
					in, _ := json.Marshal(b["input"])
					calls = append(calls, toolCall{asString(b["id"]), asString(b["name"]), string(in)})
				case "tool_result":
					results = append(results, toolResult{asString(b["tool_use_id"]), flatText(b["content"])})
				}
			}
		}
	}
	return calls, results
}

// flatText joins the text of a string or a list of text parts/blocks.
func flatText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	for _, x := range asList(v) {
		m := asMap(x)
		b.WriteString(asString(m["text"]))
		if c, ok := m["content"]; ok {
			b.WriteString(flatText(c))
		}
	}
	return b.String()
}

func asString(v any) string { s, _ := v.(string); return s }
func asList(v any) []any    { l, _ := v.([]any); return l }
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// thinking is a reasoning item or thinking block found in a request's
// history: its text and its opaque signature (Responses
// encrypted_content, Anthropic signature).
type thinking struct{ Text, Signature string }

// thinkingHistory returns the reasoning carried in a request's history.
func thinkingHistory(dialect string, req map[string]any) []thinking {
	var out []thinking
	switch dialect {
	case dialectResponses:
		for _, x := range asList(req["input"]) {
			m := asMap(x)
			if asString(m["type"]) == "reasoning" {
				out = append(out, thinking{flatText(m["summary"]), asString(m["encrypted_content"])})
			}
		}
	case dialectAnthropic:
		for _, x := range asList(req["messages"]) {
			for _, y := range asList(asMap(x)["content"]) {
				b := asMap(y)
				if asString(b["type"]) == "thinking" {
					out = append(out, thinking{asString(b["thinking"]), asString(b["signature"])})
				}
			}
		}
	}
	return out
}

// firstOf returns a unless it is empty, else b.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// upstreamModel is the model a request names: in the body, or for Gemini
// in the path (/v1beta/models/{model}:method).
func upstreamModel(dialect string, r *stubReq) string {
	if dialect == dialectGemini {
		m, _, _ := strings.Cut(strings.TrimPrefix(r.Path, stubPath[dialectGemini]), ":")
		return m
	}
	return asString(r.JSON["model"])
}
