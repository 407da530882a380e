package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// mockReply is the mock provider's text in the SDK tests: quotes, a
// backslash, non-ASCII and an emoji must all arrive intact.
const mockReply = `Hello from the "e2e" mock: naïve café ✓ 🚀, a back\slash and 3 < 4 & done.`

const sdkTool = "get_weather"

// sdkResults is what an sdk/*.mjs script prints: one entry per case.
type sdkResults map[string]json.RawMessage

// sdkUpstreams are what serves the SDKs: the mock provider, and a stub of
// each provider dialect (translated everywhere but on the SDK's own
// dialect).
var sdkUpstreams = []struct{ name, kind, api, dialect string }{
	{"mock", "mock", "", ""},
	{"anthropic", "anthropic", "", dialectAnthropic},
	{"chat", "openai", "chat", dialectChat},
	{"responses", "openai", "responses", dialectResponses},
	{"gemini", "gemini", "", dialectGemini},
}

// sdkStubDecide answers like the mock: a get_weather call when the request
// offers it and says "call get_weather", else mockReply.
func sdkStubDecide(dialect string) func(r *stubReq) stubAnswer {
	return func(r *stubReq) stubAnswer {
		if contains(toolNames(dialect, r.JSON), sdkTool) && strings.Contains(string(r.Body), "call "+sdkTool) {
			return stubAnswer{Tool: sdkTool, ToolArgs: `{"city":"Paris"}`, CallID: "call_stub_weather_01"}
		}
		return stubAnswer{Text: mockReply}
	}
}

// forEachUpstream runs fn as a subtest per upstream, with slipstream in
// front of it and the SDK script's results.
func forEachUpstream(t *testing.T, pkg, script string, fn func(t *testing.T, res sdkResults)) {
	node := needNode(t, pkg)
	for _, up := range sdkUpstreams {
		t.Run(up.name, func(t *testing.T) {
			var p *proxy
			if up.kind == "mock" {
				p = startSlipstream(t, mockConfig(mockReply))
			} else {
				s := newStub(t, up.dialect, sdkStubDecide(up.dialect))
				p = startSlipstream(t, upstreamConfig(up.kind, up.api, s.BaseURL()))
			}
			fn(t, runSDK(t, node, script, p))
		})
	}
}

// runSDK runs one SDK script against slipstream.
func runSDK(t *testing.T, node, script string, p *proxy) sdkResults {
	t.Helper()
	var res sdkResults
	runNode(t, node, script, []string{
		"SLIPSTREAM_URL=" + p.URL,
		"SLIPSTREAM_KEY=" + testKey,
		"SLIPSTREAM_MODEL=mock-e2e",
		"SLIPSTREAM_TOOL=" + sdkTool,
	}, &res)
	return res
}

// sdkCase decodes one case's result into a generic map, failing the
// subtest when the script caught an error for it.
func sdkCase(t *testing.T, res sdkResults, name string) map[string]any {
	t.Helper()
	raw, ok := res[name]
	if !ok {
		t.Fatalf("case %q missing from the script's output", name)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("case %q: %v: %s", name, err, raw)
	}
	if e, ok := m["error"]; ok {
		t.Fatalf("case %q: the SDK threw: %v (status %v)", name, e, m["status"])
	}
	t.Logf("%s: %s", name, clip(raw, 1500))
	return m
}

// str returns m[k] as a string ("" when absent or not a string).
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// num returns the number at a path of keys, and whether it was a number.
func num(m map[string]any, path ...string) (float64, bool) {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = mm[k]
	}
	f, ok := v.(float64)
	return f, ok
}

// wantEq fails when m[k] != want.
func wantEq(t *testing.T, m map[string]any, k string, want any) {
	t.Helper()
	if got := m[k]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %#v, want %#v", k, got, want)
	}
}

// wantUsage checks that the usage object at m[key] has positive integer
// in and out counts and, when total is named, total = in + out.
func wantUsage(t *testing.T, m map[string]any, key, in, out, total string) {
	t.Helper()
	u, ok := m[key].(map[string]any)
	if !ok {
		t.Errorf("%s missing or not an object: %#v", key, m[key])
		return
	}
	i, iok := num(u, in)
	o, ook := num(u, out)
	if !iok || !ook || i <= 0 || o <= 0 || i != float64(int64(i)) || o != float64(int64(o)) {
		t.Errorf("%s: want positive integer %s and %s, got %v", key, in, out, u)
		return
	}
	if total == "" {
		return
	}
	if tot, ok := num(u, total); !ok || tot != i+o {
		t.Errorf("%s: %s = %v, want %s + %s = %v", key, total, u[total], in, out, i+o)
	}
}

func TestOpenAISDK(t *testing.T) {
	t.Parallel()
	forEachUpstream(t, "openai", "openai.mjs", testOpenAISDK)
}

func testOpenAISDK(t *testing.T, res sdkResults) {
	t.Run("chat", func(t *testing.T) {
		m := sdkCase(t, res, "chat")
		wantEq(t, m, "text", mockReply)
		wantEq(t, m, "finish", "stop")
		wantEq(t, m, "object", "chat.completion")
		wantUsage(t, m, "usage", "prompt_tokens", "completion_tokens", "total_tokens")
	})
	t.Run("chat_stream", func(t *testing.T) {
		m := sdkCase(t, res, "chat_stream")
		wantEq(t, m, "text", mockReply)
		wantEq(t, m, "finish", "stop")
		wantEq(t, m, "roles", 1)
		wantUsage(t, m, "usage", "prompt_tokens", "completion_tokens", "total_tokens")
	})
	t.Run("chat_tool", func(t *testing.T) {
		m := sdkCase(t, res, "chat_tool")
		wantEq(t, m, "finish", "tool_calls")
		wantEq(t, m, "tool", sdkTool)
		wantJSONObject(t, m, "arguments")
		wantUsage(t, m, "usage", "prompt_tokens", "completion_tokens", "total_tokens")
	})
	t.Run("chat_tool_stream", func(t *testing.T) {
		m := sdkCase(t, res, "chat_tool_stream")
		wantEq(t, m, "finish", "tool_calls")
		wantEq(t, m, "tool", sdkTool)
		wantJSONObject(t, m, "arguments")
	})
	t.Run("responses", func(t *testing.T) {
		m := sdkCase(t, res, "responses")
		wantEq(t, m, "text", mockReply)
		wantEq(t, m, "status", "completed")
		wantUsage(t, m, "usage", "input_tokens", "output_tokens", "total_tokens")
	})
	t.Run("responses_stream", func(t *testing.T) {
		m := sdkCase(t, res, "responses_stream")
		wantEq(t, m, "text", mockReply)
		wantEq(t, m, "done", mockReply)
		wantEq(t, m, "status", "completed")
		wantUsage(t, m, "usage", "input_tokens", "output_tokens", "total_tokens")
		types, _ := m["types"].([]any)
		if len(types) == 0 || types[0] != "response.created" || types[len(types)-1] != "response.completed" {
			t.Errorf("event types = %v, want response.created first and response.completed last", types)
		}
	})
	t.Run("responses_tool_stream", func(t *testing.T) {
		m := sdkCase(t, res, "responses_tool_stream")
		wantEq(t, m, "status", "completed")
		wantEq(t, m, "tool", sdkTool)
		wantJSONObject(t, m, "arguments")
		if str(m, "id") == "" {
			t.Errorf("function_call has no call_id")
		}
	})
}

func TestAnthropicSDK(t *testing.T) {
	t.Parallel()
	forEachUpstream(t, "@anthropic-ai/sdk", "anthropic.mjs", testAnthropicSDK)
}

func testAnthropicSDK(t *testing.T, res sdkResults) {
	for _, name := range []string{"messages", "messages_stream"} {
		t.Run(name, func(t *testing.T) {
			m := sdkCase(t, res, name)
			wantEq(t, m, "text", mockReply)
			wantEq(t, m, "stop", "end_turn")
			wantEq(t, m, "type", "message")
			wantEq(t, m, "role", "assistant")
			wantUsage(t, m, "usage", "input_tokens", "output_tokens", "")
			if name == "messages_stream" {
				wantEq(t, m, "deltas", mockReply)
			}
		})
	}
	t.Run("messages_stream_raw", func(t *testing.T) {
		m := sdkCase(t, res, "messages_stream_raw")
		wantEq(t, m, "text", mockReply)
		wantUsage(t, m, "usage", "input_tokens", "output_tokens", "")
		types, _ := m["types"].([]any)
		if len(types) < 5 || types[0] != "message_start" || types[1] != "content_block_start" ||
			types[len(types)-3] != "content_block_stop" || types[len(types)-2] != "message_delta" || types[len(types)-1] != "message_stop" {
			t.Errorf("event types = %v, want message_start, content_block_start, deltas, content_block_stop, message_delta, message_stop", types)
		}
	})
	for _, name := range []string{"tool", "tool_stream"} {
		t.Run(name, func(t *testing.T) {
			m := sdkCase(t, res, name)
			wantEq(t, m, "stop", "tool_use")
			wantEq(t, m, "tool", sdkTool)
			if _, ok := m["input"].(map[string]any); !ok {
				t.Errorf("tool_use input = %#v, want an object", m["input"])
			}
			if str(m, "id") == "" {
				t.Errorf("tool_use has no id")
			}
			wantUsage(t, m, "usage", "input_tokens", "output_tokens", "")
		})
	}
}

func TestGenAISDK(t *testing.T) {
	t.Parallel()
	forEachUpstream(t, "@google/genai", "genai.mjs", testGenAISDK)
}

func testGenAISDK(t *testing.T, res sdkResults) {
	for _, name := range []string{"generate", "generate_stream"} {
		t.Run(name, func(t *testing.T) {
			m := sdkCase(t, res, name)
			wantEq(t, m, "text", mockReply)
			wantEq(t, m, "finish", "STOP")
			wantUsage(t, m, "usage", "promptTokenCount", "candidatesTokenCount", "totalTokenCount")
		})
	}
	t.Run("tool", func(t *testing.T) {
		m := sdkCase(t, res, "tool")
		wantEq(t, m, "tool", sdkTool)
		if _, ok := m["args"].(map[string]any); !ok {
			t.Errorf("functionCall args = %#v, want an object", m["args"])
		}
		wantUsage(t, m, "usage", "promptTokenCount", "candidatesTokenCount", "totalTokenCount")
	})
}

// wantJSONObject fails unless m[k] is a string holding a JSON object.
func wantJSONObject(t *testing.T, m map[string]any, k string) {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(str(m, k)), &obj); err != nil {
		t.Errorf("%s = %#v, want a JSON object string: %v", k, m[k], err)
	}
}
