package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

var respEventNames = [...]string{
	codec.EventStart: "start", codec.EventText: "text", codec.EventThinking: "thinking",
	codec.EventSignature: "signature", codec.EventRedacted: "redacted", codec.EventToolCall: "call",
	codec.EventToolArgs: "args", codec.EventBlockStop: "stop", codec.EventUsage: "usage",
	codec.EventFinish: "finish", codec.EventEnd: "end", codec.EventError: "error",
}

// respDumpEvents renders events one per line for comparison.
func respDumpEvents(evs []codec.Event) string {
	var b strings.Builder
	for i := range evs {
		e := &evs[i]
		fmt.Fprintf(&b, "%s", respEventNames[e.Kind])
		switch e.Kind {
		case codec.EventStart:
			fmt.Fprintf(&b, " %s %s", e.ID, e.Name)
		case codec.EventText, codec.EventThinking, codec.EventSignature, codec.EventToolArgs, codec.EventRedacted:
			fmt.Fprintf(&b, "[%d] %s", e.Block, e.Text)
		case codec.EventToolCall:
			fmt.Fprintf(&b, "[%d] %s %s custom=%v", e.Block, e.ID, e.Name, e.Custom)
		case codec.EventBlockStop:
			fmt.Fprintf(&b, "[%d]", e.Block)
		case codec.EventFinish, codec.EventUsage:
			u := e.Usage
			fmt.Fprintf(&b, " stop=%d in=%d cached=%d out=%d reasoning=%d known=%v", e.Stop, u.Input, u.CacheRead, u.Output, u.Reasoning, u.Known)
		case codec.EventError:
			fmt.Fprintf(&b, " %d kind=%d code=%s %s", e.Err.Status, e.Err.Kind, e.Err.Code, e.Err.Message)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// respEachEvents feeds a whole SSE stream through a ResponsesDecoder and
// hands the Events of each SSE event to fn before reading the next (their
// views die with the reader's buffer).
func respEachEvents(t testing.TB, d *ResponsesDecoder, stream []byte, fn func([]codec.Event)) {
	t.Helper()
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var evs []codec.Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data); err != nil {
			t.Fatalf("DecodeEvent(%s): %v", ev.Data, err)
		}
		fn(evs)
	}
}

// respDumpStream decodes a stream and renders its Events.
func respDumpStream(t testing.TB, d *ResponsesDecoder, stream []byte) string {
	var b strings.Builder
	respEachEvents(t, d, stream, func(evs []codec.Event) { b.WriteString(respDumpEvents(evs)) })
	return b.String()
}

func TestResponsesDecoderStream(t *testing.T) {
	stream, err := os.ReadFile("testdata/responses/upstream_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	var d ResponsesDecoder
	got := respDumpStream(t, &d, stream)
	want := `start resp_up1 gpt-5
thinking[0] **Plan**
thinking[0] \n\n
thinking[0] Check \"weather\".
signature[0] gAAAAB-xyz
stop[0]
text[1] Let me 
text[1] check.\n
stop[1]
call[2] call_1 get_weather custom=false
args[2] {\"city\":
args[2] \"Paris\"}
stop[2]
call[3] call_2 apply_patch custom=true
args[3] *** Begin Patch\n
stop[3]
finish stop=4 in=120 cached=64 out=40 reasoning=16 known=true
end
`
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	// Reset and reuse gives the same events.
	d.Reset()
	if again := respDumpStream(t, &d, stream); again != want {
		t.Fatalf("after Reset:\n%s", again)
	}
}

func TestResponsesDecoderEvents(t *testing.T) {
	f := func(stream, want string) {
		t.Helper()
		var d ResponsesDecoder
		got := respDumpStream(t, &d, []byte(stream))
		if got != want {
			t.Fatalf("events:\n%s\nwant:\n%s", got, want)
		}
	}
	// Whole items only (no deltas), as some compatible servers send them.
	f(`data: {"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}}

data: {"type":"response.completed","response":{"id":"r","status":"completed","usage":null}}

`, `start  
call[0] c1 f custom=false
args[0] {}
stop[0]
finish stop=4 in=0 cached=0 out=0 reasoning=0 known=false
end
`)
	// Incomplete with content_filter; reasoning_text deltas.
	f(`data: {"type":"response.created","response":{"id":"r","model":"m"}}

data: {"type":"response.reasoning_text.delta","output_index":0,"content_index":0,"delta":"raw"}

data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}

data: [DONE]

`, `start r m
thinking[0] raw
finish stop=5 in=0 cached=0 out=0 reasoning=0 known=false
end
`)
	// response.failed mid-stream.
	f(`event: response.created
data: {"type":"response.created","response":{"id":"r","model":"m"}}

event: response.failed
data: {"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window."}}}

`, `start r m
error 400 kind=10 code=context_length_exceeded Your input exceeds the context window.
`)
	// An error event ends the stream; the response.failed after it is ignored.
	f(`data: {"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 1.5s.","param":null}

data: {"type":"response.failed","response":{"error":{"code":"server_error","message":"x"}}}

`, `error 429 kind=5 code=rate_limit_exceeded Rate limit reached. Please try again in 1.5s.
`)
}

func TestResponsesDecoderBody(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		var d ResponsesDecoder
		evs, err := d.DecodeBody(nil, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := respDumpEvents(evs); got != want {
			t.Fatalf("events:\n%s\nwant:\n%s", got, want)
		}
	}
	body, err := os.ReadFile("testdata/responses/upstream_body.json")
	if err != nil {
		t.Fatal(err)
	}
	f(string(body), `start resp_b1 gpt-5
thinking[0] One.
thinking[0] \n\n
thinking[0] Two.
signature[0] enc
stop[0]
text[1] Hi there
stop[1]
call[2] call_1 get_weather custom=false
args[2] {\"city\":\"Paris\"}
stop[2]
finish stop=2 in=12 cached=0 out=30 reasoning=16 known=true
end
`)
	f(`{"id":"r","object":"response","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`,
		"error 502 kind=6 code=server_error boom\n")
	f(`{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`,
		"error 502 kind=6 code=invalid_api_key bad key\n")

	var d ResponsesDecoder
	if _, err := d.DecodeBody(nil, []byte(`{"id":`)); err == nil {
		t.Fatal("malformed body must fail")
	}
	if _, err := d.DecodeEvent(nil, nil, []byte(`{"type":`)); err == nil {
		t.Fatal("malformed event must fail")
	}
}
