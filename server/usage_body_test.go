package server

import (
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/internal/testkit"
)

// TestBodyUsage: the usage of a verbatim body is read from its last bytes
// in each dialect, all five kinds, whatever precedes it; a usage key in
// text, or a usage object cut by the window, is not taken for it.
func TestBodyUsage(t *testing.T) {
	t.Parallel()
	f := func(d codec.Dialect, body string, want codec.Usage) {
		t.Helper()
		var bt bodyTail
		bt.reset(int64(len(body)))
		for i := 0; i < len(body); i += 1000 { // fasthttp hands the body over in pieces
			bt.write([]byte(body[i:min(i+1000, len(body))]))
		}
		got := translate.BodyUsage(d, bt.appendTo(nil))
		if got != want {
			t.Fatalf("%v: got %+v, want %+v", d, got, want)
		}
		bt.reset(-1) // chunked: no declared length
		for i := 0; i < len(body); i += 333 {
			bt.write([]byte(body[i:min(i+333, len(body))]))
		}
		if got := translate.BodyUsage(d, bt.appendTo(nil)); got != want {
			t.Fatalf("%v chunked: got %+v, want %+v", d, got, want)
		}
	}
	long := strings.Repeat("x", 50000)
	all := codec.Usage{Input: 1234, CacheRead: 300, CacheWrite: 100, Output: 567, Reasoning: 89, Known: true}
	f(codec.DialectAnthropic, `{"content":[{"type":"text","text":"`+long+` \"usage\": {\"input_tokens\":1}"}],"usage":{"input_tokens":834,"cache_creation_input_tokens":100,"cache_read_input_tokens":300,"output_tokens":567,"output_tokens_details":{"thinking_tokens":89}}}`, all)
	f(codec.DialectChat, `{"choices":[{"message":{"content":"`+long+`"}}],"usage":{"prompt_tokens":1234,"completion_tokens":567,"prompt_tokens_details":{"cached_tokens":300,"cache_write_tokens":100},"completion_tokens_details":{"reasoning_tokens":89}},"system_fingerprint":"fp"}`, all)
	f(codec.DialectResponses, `{"output":[{"content":[{"text":"`+long+`"}]}],"usage":{"input_tokens":1234,"input_tokens_details":{"cached_tokens":300,"cache_write_tokens":100},"output_tokens":567,"output_tokens_details":{"reasoning_tokens":89}},"metadata":{"k":"`+strings.Repeat("m", 3000)+`"}}`, all)
	f(codec.DialectGemini, `{"candidates":[{"content":{"parts":[{"text":"`+long+`"}]}}],"usageMetadata": {"promptTokenCount": 1234, "cachedContentTokenCount": 300, "candidatesTokenCount": 478, "thoughtsTokenCount": 89}, "modelVersion":"g"}`,
		codec.Usage{Input: 1234, CacheRead: 300, Output: 567, Reasoning: 89, Known: true})
	// No usage at all, and usage only inside text.
	f(codec.DialectChat, `{"choices":[{"message":{"content":"`+long+`"}}]}`, codec.Usage{})
	f(codec.DialectAnthropic, `{"content":[{"type":"text","text":"say \"usage\": {\"input_tokens\":5}"}]}`, codec.Usage{})
	// A usage object before the window's start is not read half.
	f(codec.DialectChat, `{"usage":{"prompt_tokens":1},"choices":[{"message":{"content":"`+long+`"}}]}`, codec.Usage{})
}

// TestSameDialectChatEstimate: a same-dialect Chat stream whose upstream
// sends no usage (the client did not ask include_usage) is counted
// locally and marked estimated; with usage, the upstream's counts are
// taken.
func TestSameDialectChatEstimate(t *testing.T) {
	t.Parallel()
	noUsage := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The quick brown fox jumps over the lazy dog.\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	withUsage := noUsage + "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":77,\"completion_tokens\":11,\"completion_tokens_details\":{\"reasoning_tokens\":3}}}\n\n"
	for _, tc := range []struct {
		reply          string
		in, out, think float64
		estimated      bool
	}{
		{noUsage + "data: [DONE]\n\n", -1, 10, 0, true},
		{withUsage + "data: [DONE]\n\n", 77, 11, 3, false},
	} {
		up := newUpstream(t, &recorder{reply: tc.reply, contentType: "text/event-stream"})
		var logs testkit.Buffer
		cfg := parseConfig(t, "providers:\n  - {name: c, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\nlog: {access: true, format: json}\n", up.URL)
		base := serveConfig(t, cfg, &logs)
		status, h, got := post(t, base+"/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"Tell me about foxes and dogs, briefly."}]}`)
		if status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		line := waitLogLine(t, &logs, h.Get(requestIDHeader))
		if line["upstream_request_id"] != "req_up_1" {
			t.Fatalf("the upstream's request id is not logged: %v", line)
		}
		in := line["input_tokens"].(float64)
		if line["estimated"] != tc.estimated || line["output_tokens"] != tc.out || line["reasoning_tokens"] != tc.think ||
			(tc.in >= 0 && in != tc.in) || (tc.in < 0 && (in < 8 || in > 30)) {
			t.Fatalf("access log line %v", line)
		}
	}
}
