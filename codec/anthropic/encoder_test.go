package anthropic

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata (review them by eye)")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s:\ngot\n%s\nwant\n%s", name, got, want)
	}
}

var clientReq = &codec.Request{Model: []byte("claude-client"), Created: 1730000000}

// TestEncoderGolden runs recorded upstream streams and bodies through the
// Decoder and the Encoder, in both modes.
func TestEncoderGolden(t *testing.T) {
	f := func(in, out string) {
		t.Helper()
		var d Decoder
		var e Encoder
		e.Reset(clientReq, true)
		var dst []byte
		decodeStream(t, &d, readTestdata(t, in), func(evs []codec.Event) {
			for i := range evs {
				dst = e.Append(dst, &evs[i])
			}
		})
		if !e.Done() {
			t.Fatalf("%s: encoder not done", in)
		}
		if err := CheckStream(dst); err != nil {
			t.Fatalf("%s: CheckStream: %v\n%s", in, err, dst)
		}
		golden(t, out+".sse", dst)

		// the same stream, non-streamed
		d.Reset()
		e.Reset(clientReq, false)
		dst = dst[:0]
		decodeStream(t, &d, readTestdata(t, in), func(evs []codec.Event) {
			for i := range evs {
				dst = e.Append(dst, &evs[i])
			}
		})
		if !gjson.ValidBytes(dst) {
			t.Fatalf("%s: invalid body %s", in, dst)
		}
		golden(t, out+".json", dst)
	}
	f("stream_text.sse", "encoded_text")
	f("stream_thinking_tool.sse", "encoded_thinking_tool")

	var d Decoder
	var e Encoder
	e.Reset(clientReq, false)
	evs, err := d.DecodeBody(nil, readTestdata(t, "body_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dst []byte
	for i := range evs {
		dst = e.Append(dst, &evs[i])
	}
	golden(t, "encoded_body_tool.json", dst)
}

// TestEncoderEvents feeds Event sequences shaped like other dialects'
// decoders produce.
func TestEncoderEvents(t *testing.T) {
	f := func(stream bool, evs []codec.Event, want string) {
		t.Helper()
		var e Encoder
		e.Reset(clientReq, stream)
		var dst []byte
		for i := range evs {
			dst = e.Append(dst, &evs[i])
		}
		if stream {
			if err := CheckStream(dst); err != nil && e.Done() {
				t.Fatalf("CheckStream: %v\n%s", err, dst)
			}
		} else if !gjson.ValidBytes(dst) {
			t.Fatalf("invalid body: %s", dst)
		}
		if string(dst) != want {
			t.Fatalf("got\n%s\nwant\n%s", dst, want)
		}
	}
	b := func(s string) []byte { return []byte(s) }
	start := codec.Event{Kind: codec.EventStart, ID: b("chatcmpl-1"), Name: b("gpt-x")}
	end := codec.Event{Kind: codec.EventEnd, Usage: codec.Usage{Input: 100, CacheRead: 60, Output: 7, Known: true}}

	// Chat-like: reasoning interleaved with text opens separate blocks; no
	// EventBlockStop; tool call without arguments; usage only at the end
	f(true, []codec.Event{start,
		{Kind: codec.EventThinking, Text: b("hm")},
		{Kind: codec.EventText, Text: b("A")},
		{Kind: codec.EventThinking, Text: b("more")},
		{Kind: codec.EventToolCall, Block: 0, ID: b("call_1"), Name: b("ls")},
		{Kind: codec.EventFinish, Stop: codec.StopEndTurn},
		end,
	}, `event: message_start
data: {"type":"message_start","message":{"id":"msg_chatcmpl-1","type":"message","role":"assistant","model":"claude-client","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"A"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"more"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: content_block_start
data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"call_1","name":"ls","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":3}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":60,"output_tokens":7}}

event: message_stop
data: {"type":"message_stop"}

`)
	// Responses-like: signature only (encrypted_content, no summary), custom
	// tool call whose free text is wrapped as {"input": ...}
	f(true, []codec.Event{{Kind: codec.EventStart, ID: b("resp_1")},
		{Kind: codec.EventSignature, Block: 0, Text: b("gAAA")},
		{Kind: codec.EventBlockStop, Block: 0},
		{Kind: codec.EventToolCall, Block: 1, ID: b("call_2"), Name: b("apply_patch"), Custom: true},
		{Kind: codec.EventToolArgs, Block: 1, Text: b(`*** Begin \"x\"\n`)},
		{Kind: codec.EventBlockStop, Block: 1},
		{Kind: codec.EventFinish, Stop: codec.StopEndTurn},
		{Kind: codec.EventEnd},
	}, `event: message_start
data: {"type":"message_start","message":{"id":"msg_resp_1","type":"message","role":"assistant","model":"claude-client","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"gAAA"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_2","name":"apply_patch","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"input\":\""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"*** Begin \\\"x\\\"\\n"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":0}}

event: message_stop
data: {"type":"message_stop"}

`)
	// mid-stream error: the in-band error event, nothing after it
	f(true, []codec.Event{start, {Kind: codec.EventText, Text: b("Pa")},
		{Kind: codec.EventError, Err: codec.Error{Kind: codec.ErrOverloaded, Message: b("Overloaded")}},
		{Kind: codec.EventText, Text: b("ignored")},
	}, `event: message_start
data: {"type":"message_start","message":{"id":"msg_chatcmpl-1","type":"message","role":"assistant","model":"claude-client","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Pa"}}

event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

`)
	// non-streamed: error before anything -> error body
	f(false, []codec.Event{{Kind: codec.EventError, Err: codec.Error{Kind: codec.ErrRateLimit, Message: b("slow")}}},
		`{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`)
	// non-streamed: Chat-style string arguments unescaped into an object;
	// invalid ones kept as _raw; a custom tool's text as {"input":...};
	// a stop sequence; a missing tool id minted
	f(false, []codec.Event{start,
		{Kind: codec.EventThinking, Text: b("t")},
		{Kind: codec.EventToolCall, Block: 0, Name: b("f")},
		{Kind: codec.EventToolArgs, Block: 0, Text: b(`{\"a\":`)},
		{Kind: codec.EventToolArgs, Block: 0, Text: b(`\"x\\ny\"}`)},
		{Kind: codec.EventToolCall, Block: 1, ID: b("c2"), Name: b("f")},
		{Kind: codec.EventToolArgs, Block: 1, Text: b(`{\"a\"`)},
		{Kind: codec.EventToolCall, Block: 2, ID: b("c3"), Name: b("p"), Custom: true},
		{Kind: codec.EventToolArgs, Block: 2, Text: b(`line\n`)},
		{Kind: codec.EventFinish, Stop: codec.StopSequence, Text: b("END")},
		end,
	}, `{"id":"msg_chatcmpl-1","type":"message","role":"assistant","model":"claude-client","content":[{"type":"thinking","thinking":"t","signature":""},{"type":"tool_use","id":"toolu_msg_chatcmpl-1_1","name":"f","input":{"a":"x\ny"}},{"type":"tool_use","id":"c2","name":"f","input":{"_raw":"{\"a\""}},{"type":"tool_use","id":"c3","name":"p","input":{"input":"line\n"}}],"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":60,"output_tokens":7}}`)
	// non-streamed: nothing but the end still yields a complete message
	f(false, []codec.Event{{Kind: codec.EventEnd}},
		`{"id":"msg_slipstream","type":"message","role":"assistant","model":"claude-client","content":[],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`)
}
