package translate

import (
	"encoding/json"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/pool"
)

// BenchmarkTranslateRequest translates the 10.8 KB Claude-Code-shaped
// request (3 system blocks, 20 tools with schemas, three tool turns with
// thinking) from Anthropic to Chat and to Responses, beside the
// same-dialect path (the server relays Anthropic to Anthropic with only the
// model replaced: one splice) and a naive baseline that decodes into
// map[string]any, rewrites and marshals, as many proxies do.
func BenchmarkTranslateRequest(b *testing.B) {
	body := benchRequest()
	b.Run("same_dialect_splice", func(b *testing.B) { benchSplice(b, body) })
	for _, up := range []codec.Dialect{codec.DialectChat, codec.DialectResponses, codec.DialectGemini} {
		b.Run("anthropic_to_"+fileNames[up], func(b *testing.B) { benchTranslate(b, up, body) })
	}
	b.Run("naive_anthropic_to_chat", func(b *testing.B) { benchNaive(b, body) })
}

func benchTranslate(b *testing.B, upstream codec.Dialect, body []byte) {
	if !requestsWired(codec.DialectAnthropic) || !requestsWired(upstream) {
		b.Skip("dialect not wired")
	}
	var r codec.Request
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.Reset()
		if err := DecodeRequest(codec.DialectAnthropic, &r, body); err != nil {
			b.Fatal(err)
		}
		buf := pool.Get(RequestSizeHint(len(body)))
		out, err := AppendRequest(upstream, buf.B[:0], &r, upstreamModels[upstream])
		if err != nil {
			b.Fatal(err)
		}
		buf.B = out
		pool.Put(buf)
	}
}

// benchSplice is the same-dialect path: find the model with gjson and copy
// the body once with the model replaced.
func benchSplice(b *testing.B, body []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	model := []byte(`"claude-sonnet-4-5"`)
	edits := make([]codec.Edit, 1)
	for b.Loop() {
		m := codec.Get(body, "model")
		edits[0] = codec.Edit{Start: m.Index, End: m.Index + len(m.Raw), Value: model}
		buf := pool.Get(len(body) + 64)
		buf.B = codec.AppendSplice(buf.B[:0], body, edits)
		pool.Put(buf)
	}
}

func benchNaive(b *testing.B, body []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := naiveAnthropicToChat(body); err != nil {
			b.Fatal(err)
		}
	}
}

// naiveAnthropicToChat is the baseline: encoding/json into maps, a rewrite
// of the same mapping the real writer does, and a marshal.
func naiveAnthropicToChat(body []byte) ([]byte, error) {
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	var msgs []any
	if sys := naiveSystem(in["system"]); sys != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": sys})
	}
	for _, m := range in["messages"].([]any) {
		msgs = naiveMessage(msgs, m.(map[string]any))
	}
	out := map[string]any{
		"model":                 "gpt-4.1",
		"messages":              msgs,
		"max_completion_tokens": in["max_tokens"],
		"stream":                in["stream"],
		"stream_options":        map[string]any{"include_usage": true},
	}
	var tools []any
	for _, t := range in["tools"].([]any) {
		t := t.(map[string]any)
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
			"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}})
	}
	out["tools"] = tools
	return json.Marshal(out)
}

func naiveSystem(v any) string {
	blocks, _ := v.([]any)
	var parts []string
	for _, b := range blocks {
		text, _ := b.(map[string]any)["text"].(string)
		if !strings.HasPrefix(text, "x-anthropic-billing-header:") {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n\n")
}

func naiveMessage(msgs []any, m map[string]any) []any {
	blocks, ok := m["content"].([]any)
	if !ok {
		return append(msgs, map[string]any{"role": m["role"], "content": m["content"]})
	}
	var text []string
	var calls []any
	for _, b := range blocks {
		b := b.(map[string]any)
		switch b["type"] {
		case "text":
			text = append(text, b["text"].(string))
		case "tool_use":
			args, _ := json.Marshal(b["input"])
			calls = append(calls, map[string]any{"id": b["id"], "type": "function",
				"function": map[string]any{"name": b["name"], "arguments": string(args)}})
		case "tool_result":
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": b["tool_use_id"], "content": b["content"]})
		}
	}
	if len(text) == 0 && len(calls) == 0 {
		return msgs
	}
	out := map[string]any{"role": m["role"], "content": strings.Join(text, "")}
	if len(calls) > 0 {
		out["tool_calls"] = calls
	}
	return append(msgs, out)
}
