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
