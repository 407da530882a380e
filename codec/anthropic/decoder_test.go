package anthropic

import (
	"testing"

	"slipstream/codec"
)

func TestDecoderStream(t *testing.T) {
	f := func(file, want string) {
		t.Helper()
		var d Decoder
		d.Reset()
		var got string
		decodeStream(t, &d, readTestdata(t, file), func(evs []codec.Event) { got += dumpEvents(evs) })
		if got != want {
			t.Fatalf("%s:\ngot\n%s\nwant\n%s", file, got, want)
		}
	}
	f("stream_text.sse", `start#0 msg_02 claude-haiku-4-5 [in=12 cr=0 cw=0 out=1 r=0]
text#0 Hi
text#0  there\n
stop#0
finish#0 stop=1 [in=12 cr=0 cw=0 out=4 r=0]
end#0 [in=12 cr=0 cw=0 out=4 r=0]
`)
	f("stream_thinking_tool.sse", `start#0 msg_01 claude-sonnet-4-5 [in=1235 cr=1200 cw=10 out=1 r=0]
thinking#0 Need the weather tool.
sig#0 EqQBCkYI
stop#0
text#1 Checking \"now\".
stop#1
call#2 toolu_02 get_weather
args#2 {\"city\":
args#2 \"Paris\"}
stop#2
call#3 toolu_03 now
stop#3
finish#0 stop=4 [in=1235 cr=1200 cw=10 out=61 r=0]
end#0 [in=1235 cr=1200 cw=10 out=61 r=0]
`)
	f("stream_error.sse", `start#0 msg_03 claude-opus-4-6 [in=7 cr=0 cw=0 out=1 r=0]
text#0 Par
error 529 7 Overloaded
`)
}

func TestDecoderEvents(t *testing.T) {
	// f feeds unnamed or named events one by one into a fresh decoder.
	f := func(events []string, want string) {
		t.Helper()
		var d Decoder
		var got string
		for _, e := range events {
			evs, err := d.DecodeEvent(nil, nil, []byte(e))
			if err != nil {
				t.Fatalf("DecodeEvent(%s): %v", e, err)
			}
			got += dumpEvents(evs)
		}
		if got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
	// no message_start: EventStart synthesised; message_delta with input counts
	// updates usage; server tool blocks skipped; redacted thinking; full input in start
	f([]string{
		`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"RD"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a": "x\ny"}}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":9}}`,
		`{"type":"message_delta","delta":{},"usage":{"output_tokens":10}}`,
		`{"type":"ping"}`,
		`{"type":"message_stop"}`,
		`{"type":"message_stop"}`,
	}, `start#0
redacted#0 RD
stop#0
call#2 t n
args#2 {\"a\":\"x\\ny\"}
stop#2
finish#0 stop=2 [in=150 cr=50 cw=0 out=9 r=0]
usage#0 [in=150 cr=50 cw=0 out=10 r=0]
end#0 [in=150 cr=50 cw=0 out=10 r=0]
`)
	// stop sequence, message_stop without message_delta
	f([]string{
		`{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"output_tokens":2,"output_tokens_details":{"thinking_tokens":1}}}`,
		`{"type":"message_stop"}`,
	}, `start#0 m x [in=1 cr=0 cw=0 out=1 r=0]
finish#0 stop=3 END [in=1 cr=0 cw=0 out=2 r=1]
end#0 [in=1 cr=0 cw=0 out=2 r=1]
`)
	f([]string{`{"type":"message_start","message":{"id":"m"}}`, `{"type":"message_stop"}`},
		"start#0 m\nfinish#0 stop=1\nend#0\n")
	// context-length error keeps Anthropic's text and gains OpenAI's code
	f([]string{`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`},
		"error 400 10 prompt is too long: 210000 tokens > 200000 maximum context_length_exceeded\n")

	var d Decoder
	if _, err := d.DecodeEvent(nil, []byte("message_start"), []byte(`{"type":`)); err != ErrBadEvent {
		t.Fatalf("malformed event: got %v, want ErrBadEvent", err)
	}
}

func TestDecoderBody(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var d Decoder
		evs, err := d.DecodeBody(nil, []byte(body))
		if err != nil {
			t.Fatalf("DecodeBody: %v", err)
		}
		if got := dumpEvents(evs); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
	f(string(readTestdata(t, "body_tool.json")), `start#0 msg_01 claude-sonnet-4-5 [in=1510 cr=1200 cw=0 out=42 r=0]
thinking#0 Plan.
sig#0 SIG
stop#0
text#1 Checking.
stop#1
call#2 toolu_02 get_weather
args#2 {\"city\":\"Paris\",\"day\":\"tomorrow\"}
stop#2
finish#0 stop=4 [in=1510 cr=1200 cw=0 out=42 r=0]
end#0 [in=1510 cr=1200 cw=0 out=42 r=0]
`)
	f(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "error 429 5 slow down\n")

	var d Decoder
	if _, err := d.DecodeBody(nil, []byte(`{"id":`)); err != ErrBadEvent {
		t.Fatalf("malformed body: got %v, want ErrBadEvent", err)
	}
}
