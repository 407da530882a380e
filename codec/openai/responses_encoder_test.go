package openai

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

var respUpdate = flag.Bool("update-responses", false, "rewrite the Responses golden files in testdata/responses")

// respCodexRequest is the client request the encoder tests answer: Codex's
// own request, with Created fixed.
func respCodexRequest(t testing.TB) *codec.Request {
	t.Helper()
	body, err := os.ReadFile("testdata/responses/codex_request.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &codec.Request{}
	if err := DecodeResponsesRequest(r, body); err != nil {
		t.Fatal(err)
	}
	r.Created = 1730000000
	return r
}

// respEncode runs events through a ResponsesEncoder.
func respEncode(req *codec.Request, stream bool, evs []codec.Event) []byte {
	var e ResponsesEncoder
	e.Reset(req, stream)
	var out []byte
	for i := range evs {
		out = e.Append(out, &evs[i])
	}
	return out
}

// respTranslate decodes an upstream Responses stream and encodes it for
// req, event by event, as the stream pump does.
func respTranslate(t testing.TB, stream []byte, req *codec.Request, streaming bool) []byte {
	var d ResponsesDecoder
	var e ResponsesEncoder
	e.Reset(req, streaming)
	var out []byte
	respEachEvents(t, &d, stream, func(evs []codec.Event) {
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
	})
	return out
}

// respGolden compares got with testdata/responses/name (rewritten with
// -update-responses).
func respGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/responses/" + name
	if *respUpdate {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs:\ngot:\n%s", name, got)
	}
}

func TestResponsesEncoderStreamGolden(t *testing.T) {
	stream, err := os.ReadFile("testdata/responses/upstream_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	out := respTranslate(t, stream, respCodexRequest(t), true)
	if err := CheckResponsesStream(out); err != nil {
		t.Fatalf("CheckResponsesStream: %v\n%s", err, out)
	}
	respGolden(t, "encoder_stream.golden.sse", out)

	body := respTranslate(t, stream, respCodexRequest(t), false)
	if !gjson.ValidBytes(body) {
		t.Fatalf("invalid body: %s", body)
	}
	respGolden(t, "encoder_body.golden.json", body)
}

// respForeignEvents is what an Anthropic upstream gives for a thinking
// turn that calls Codex's custom apply_patch tool (through a function with
// one string "input"), a namespaced tool, then stops at max_tokens.
func respForeignEvents() []codec.Event {
	return []codec.Event{
		{Kind: codec.EventStart, ID: []byte("msg_01X"), Name: []byte("claude-x")},
		{Kind: codec.EventThinking, Block: 0, Text: []byte(`Need a \"patch\".`)},
		{Kind: codec.EventSignature, Block: 0, Text: []byte("EqQBsig")},
		{Kind: codec.EventBlockStop, Block: 0},
		{Kind: codec.EventText, Block: 1, Text: []byte("Patching.")},
		{Kind: codec.EventBlockStop, Block: 1},
		{Kind: codec.EventToolCall, Block: 2, ID: []byte("toolu_1"), Name: []byte("apply_patch")},
		{Kind: codec.EventToolArgs, Block: 2, Text: []byte(`{\"input\": \"*** Begin Patch\\n`)},
		{Kind: codec.EventToolArgs, Block: 2, Text: []byte(`*** End Patch\"}`)},
		{Kind: codec.EventBlockStop, Block: 2},
		{Kind: codec.EventToolCall, Block: 3, ID: []byte("toolu_2"), Name: []byte("mcp__codex_apps__gmail_search_emails")},
		{Kind: codec.EventToolArgs, Block: 3, Text: []byte(`{\"q\":\"x\"}`)},
		{Kind: codec.EventToolCall, Block: 4, ID: []byte("toolu_3"), Name: []byte("shell")},
		{Kind: codec.EventRedacted, Block: 5, Text: []byte("opaque")},
		{Kind: codec.EventFinish, Stop: codec.StopMaxTokens, Usage: codec.Usage{Known: true, Input: 300, CacheRead: 200, Output: 50}},
		{Kind: codec.EventUsage, Usage: codec.Usage{Known: true, Output: 61}},
		{Kind: codec.EventEnd},
	}
}

func TestResponsesEncoderForeign(t *testing.T) {
	out := respEncode(respCodexRequest(t), true, respForeignEvents())
	if err := CheckResponsesStream(out); err != nil {
		t.Fatalf("CheckResponsesStream: %v\n%s", err, out)
	}
	respGolden(t, "encoder_foreign.golden.sse", out)
	s := string(out)
	for _, want := range []string{
		`"type":"custom_tool_call","status":"completed","input":"*** Begin Patch\n*** End Patch","call_id":"toolu_1","name":"apply_patch"`,
		`"id":"fc_toolu_2","type":"function_call","status":"completed","arguments":"{\"q\":\"x\"}","call_id":"toolu_2","name":"_search_emails","namespace":"mcp__codex_apps__gmail"`,
		`"arguments":"{}","call_id":"toolu_3","name":"shell"`,
		`"summary":[{"type":"summary_text","text":"Need a \"patch\"."}],"encrypted_content":"EqQBsig"`,
		`{"id":"rs_msg_01X_5","type":"reasoning","summary":[],"encrypted_content":"opaque"}`,
		`event: response.incomplete`,
		`"incomplete_details":{"reason":"max_output_tokens"}`,
		`"usage":{"input_tokens":300,"input_tokens_details":{"cached_tokens":200,"cache_write_tokens":0},"output_tokens":61,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":361}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %s", want)
		}
	}
}

func TestResponsesEncoderErrors(t *testing.T) {
	req := respCodexRequest(t)
	rate := codec.Error{Status: 429, Kind: codec.ErrRateLimit, Message: []byte("Rate limit reached. Please try again in 1.5s.")}

	// Mid-stream: the open message is closed, then response.failed.
	out := respEncode(req, true, []codec.Event{
		{Kind: codec.EventStart, ID: []byte("resp_9")},
		{Kind: codec.EventText, Text: []byte("partial")},
		{Kind: codec.EventError, Err: rate},
		{Kind: codec.EventText, Text: []byte("ignored")},
	})
	if err := CheckResponsesStream(out); err != nil {
		t.Fatalf("CheckResponsesStream: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, `"status":"failed","background":false,"error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 1.5s."}`) ||
		strings.Contains(s, "event: error") || strings.Contains(s, "ignored") || !strings.Contains(s, `"id":"resp_9"`) {
		t.Fatalf("unexpected failed stream:\n%s", s)
	}

	// Before anything: created and in_progress still come first.
	ctx := codec.Error{Status: 400, Kind: codec.ErrContextLength, Message: []byte("too long")}
	out = respEncode(req, true, []codec.Event{{Kind: codec.EventError, Err: ctx}})
	if err := CheckResponsesStream(out); err != nil {
		t.Fatalf("CheckResponsesStream: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"error":{"code":"context_length_exceeded","message":"too long"}`) {
		t.Fatalf("unexpected:\n%s", out)
	}

	// Not streaming: the error body.
	out = respEncode(req, false, []codec.Event{{Kind: codec.EventStart}, {Kind: codec.EventError, Err: rate}})
	if want := `{"error":{"message":"Rate limit reached. Please try again in 1.5s.","type":"rate_limit_exceeded","param":null,"code":"rate_limit_exceeded"}}`; string(out) != want {
		t.Fatalf("body %s\nwant %s", out, want)
	}
}

func TestResponsesEncoderBody(t *testing.T) {
	req := &codec.Request{Model: []byte("gpt-5"), Created: 1730000000, Reasoning: codec.Reasoning{Effort: codec.EffortLow}}
	out := respEncode(req, false, []codec.Event{
		{Kind: codec.EventStart, ID: []byte("chatcmpl-1")},
		{Kind: codec.EventText, Block: 0, Text: []byte("Hi there")},
		{Kind: codec.EventToolCall, Block: 1, ID: []byte("call_1"), Name: []byte("get_weather")},
		{Kind: codec.EventToolArgs, Block: 1, Text: []byte(`{\"city\":\"Paris\"}`)},
		{Kind: codec.EventFinish, Stop: codec.StopToolUse},
		{Kind: codec.EventUsage, Usage: codec.Usage{Known: true, Input: 12, Output: 30, Reasoning: 16}},
		{Kind: codec.EventEnd},
	})
	want := `{"id":"resp_chatcmpl-1","object":"response","created_at":1730000000,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"gpt-5",` +
		`"output":[{"id":"msg_chatcmpl-1_0","type":"message","status":"completed","content":[{"type":"output_text","text":"Hi there","annotations":[]}],"role":"assistant"},` +
		`{"id":"fc_call_1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"get_weather"}],` +
		`"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":"low","summary":null},"store":false,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled",` +
		`"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":16},"total_tokens":42},"metadata":{}}`
	if string(out) != want {
		t.Fatalf("body:\n%s\nwant:\n%s", out, want)
	}
}
