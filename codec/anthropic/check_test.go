package anthropic

import (
	"strings"
	"testing"
)

func TestCheckStreamAccepts(t *testing.T) {
	f := func(file string) {
		t.Helper()
		if err := CheckStream(readTestdata(t, file)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	f("stream_text.sse")
	f("stream_thinking_tool.sse")
	f("stream_error.sse")
}

func TestCheckStreamRejects(t *testing.T) {
	const (
		start   = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"
		text0   = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
		delta0  = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n"
		stop0   = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
		mdelta  = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n"
		mstop   = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
		tool0   = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n"
		thdelta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"x\"}}\n\n"
	)
	json := func(s string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + s + "}}\n\n"
	}
	f := func(stream, want string) {
		t.Helper()
		err := CheckStream([]byte(stream))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("CheckStream: got %v, want an error containing %q", err, want)
		}
	}
	// sanity: the pieces form a valid stream
	if err := CheckStream([]byte(start + text0 + delta0 + stop0 + mdelta + mstop)); err != nil {
		t.Fatal(err)
	}
	if err := CheckStream([]byte(start + tool0 + json(`"{\"a\":"`) + json(`"1}"`) + stop0 + mdelta + mstop)); err != nil {
		t.Fatal(err)
	}
	f(text0+mstop, "event 0 (content_block_start): before message_start")
	f(start+start, "event 1 (message_start): second message_start")
	f(start+delta0, "event 1 (content_block_delta): delta for block 0, which is not open")
	f(start+text0+delta0+mdelta, "event 3 (message_delta): message_delta while block 0 is open")
	f(start+text0+text0, "block 0 started while block 0 is open")
	f(start+text0+stop0+text0, "event 3 (content_block_start): index 0, want 1")
	f(start+text0+thdelta, `delta type "thinking_delta" in a text block`)
	f(start+text0+delta0+stop0+mdelta, "stream ended without message_stop")
	f(start+text0+delta0+stop0+mstop, "message_stop without message_delta")
	f(start+mdelta+mstop+mstop, "event after the end")
	f(start+mdelta+mdelta, "second message_delta")
	f(start+tool0+json(`"{\"a\":"`)+stop0, "tool_use input is not a JSON object")
	f(start+tool0+json(`"[1]"`)+stop0, "tool_use input is not a JSON object")
	f(strings.Replace(start, "event: message_start\n", "", 1), "missing event: line")
	f(strings.Replace(start, `"content":[]`, `"content":[1]`, 1), "content must be an empty array")
	f(strings.Replace(start, `"input_tokens":1`, `"input_tokens":1.5`, 1), "usage.input_tokens must be an integer")
	f(start+strings.Replace(mdelta, "end_turn", "done", 1), "unknown stop_reason")
	f(start+strings.Replace(mdelta, `"output_tokens":3`, `"output_tokens":null`, 1), "usage.output_tokens must be an integer")
	f(start+"event: content_block_stop\ndata: {\"type\":\"content_block_start\"}\n\n", "differs from the event name")
	f(start+"event: message_delta\ndata: {\"type\":\n\n", "data is not a JSON object")
	f(start+text0+delta0+stop0+mdelta+strings.TrimSuffix(mstop, "\n"), "not terminated by a blank line")
	f("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}\n\n", "error needs error.type and error.message")
	f(start+"event: message_pause\ndata: {\"type\":\"message_pause\"}\n\n", "unknown event")
}
