package openai

import (
	"bytes"
	"io"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// chatTranscode runs an upstream Chat stream through ChatDecoder and
// ChatEncoder and returns the client output.
func chatTranscode(t testing.TB, stream []byte, req *codec.Request, clientStream bool) []byte {
	t.Helper()
	var d ChatDecoder
	var e ChatEncoder
	e.Reset(req, clientStream)
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var out []byte
	var evs []codec.Event
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
	}
}

func TestChatEncoderStream(t *testing.T) {
	f := func(name string, includeUsage bool) {
		t.Helper()
		req := &codec.Request{Model: []byte("client-model"), Created: 1700000000, IncludeUsage: includeUsage}
		out := chatTranscode(t, chatReadTestdata(t, name+".sse"), req, true)
		if err := CheckChatStream(out); err != nil {
			t.Fatalf("%s: CheckChatStream: %v\n%s", name, err, out)
		}
		suffix := ".out"
		if includeUsage {
			suffix = ".usage.out"
		}
		chatGolden(t, name+suffix, string(out))
	}
	f("stream_text", true)
	f("stream_text", false)
	f("stream_tools", true)
	f("stream_reasoning", false)
	f("stream_error", false)
	f("stream_compat", true)
}

func TestChatEncoderBody(t *testing.T) {
	f := func(name string) {
		t.Helper()
		req := &codec.Request{Model: []byte("client-model"), Created: 1700000000}
		var d ChatDecoder
		evs, err := d.DecodeBody(nil, chatReadTestdata(t, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var e ChatEncoder
		e.Reset(req, false)
		var out []byte
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
		if !e.Done() || !gjson.ValidBytes(out) {
			t.Fatalf("done=%v, output not valid JSON: %s", e.Done(), out)
		}
		chatGolden(t, name+".out", string(out)+"\n")
	}
	f("body_text")
	f("body_tools")
	f("body_error")
	// A stream's events make the same body.
	req := &codec.Request{Model: []byte("client-model"), Created: 1700000000}
	out := chatTranscode(t, chatReadTestdata(t, "stream_compat.sse"), req, false)
	chatGolden(t, "stream_compat.body.out", string(out)+"\n")
}

// chatEvents is an Anthropic-shaped event sequence: thinking with a
// signature, text, a tool call without argument fragments, a custom call,
// and usage after the finish.
func chatEvents() []codec.Event {
	b := func(s string) []byte { return []byte(s) }
	return []codec.Event{
		{Kind: codec.EventStart, ID: b("msg_01"), Name: b("claude-x"), Usage: codec.Usage{Input: 10, Known: true}},
		{Kind: codec.EventThinking, Block: 0, Text: b("Need a tool.")},
		{Kind: codec.EventSignature, Block: 0, Text: b("EqQB")},
		{Kind: codec.EventBlockStop, Block: 0},
		{Kind: codec.EventText, Block: 1, Text: b(`Checking \"now\".`)},
		{Kind: codec.EventBlockStop, Block: 1},
		{Kind: codec.EventToolCall, Block: 2, ID: b("toolu_1"), Name: b("now")},
		{Kind: codec.EventBlockStop, Block: 2},
		{Kind: codec.EventToolCall, Block: 3, ID: b("toolu_2"), Name: b("get_weather")},
		{Kind: codec.EventToolArgs, Block: 3, Text: b("")},
		{Kind: codec.EventToolArgs, Block: 3, Text: b(`{\"city\": \"Paris\"}`)},
		{Kind: codec.EventToolCall, Block: 4, ID: b("call_3"), Name: b("apply_patch"), Custom: true},
		{Kind: codec.EventToolArgs, Block: 4, Text: b(`*** Begin Patch\n`)},
		{Kind: codec.EventFinish, Stop: codec.StopToolUse},
		{Kind: codec.EventUsage, Usage: codec.Usage{Input: 1310, CacheRead: 1200, CacheWrite: 100, Output: 42, Reasoning: 7, Known: true}},
		{Kind: codec.EventEnd},
	}
}

func TestChatEncoderNeutral(t *testing.T) {
	f := func(stream, includeUsage bool, name string) {
		t.Helper()
		var e ChatEncoder
		e.Reset(&codec.Request{Model: []byte("gpt-client"), Created: 1700000001, IncludeUsage: includeUsage}, stream)
		evs := chatEvents()
		var out []byte
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
		if !e.Done() {
			t.Fatal("not done after EventEnd")
		}
		if out2 := e.Append(out, &evs[1]); len(out2) != len(out) {
			t.Fatal("wrote after the end")
		}
		if stream {
			if err := CheckChatStream(out); err != nil {
				t.Fatalf("CheckChatStream: %v\n%s", err, out)
			}
		} else if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		chatGolden(t, name, string(out))
	}
	f(true, true, "neutral.usage.out")
	f(true, false, "neutral.out")
	f(false, false, "neutral.body.out")
}

func TestChatEncoderError(t *testing.T) {
	f := func(stream bool, evs []codec.Event, want string) {
		t.Helper()
		var e ChatEncoder
		e.Reset(&codec.Request{Model: []byte("m"), Created: 1}, stream)
		var out []byte
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
		if string(out) != want {
			t.Fatalf("got:\n%s\nwant:\n%s", out, want)
		}
		if !e.Done() {
			t.Fatal("not done after EventError")
		}
		if stream {
			if err := CheckChatStream(out); err != nil {
				t.Fatalf("CheckChatStream: %v", err)
			}
		}
	}
	overloaded := codec.Event{Kind: codec.EventError, Err: codec.Error{Status: 503, Kind: codec.ErrOverloaded, Message: []byte("Overloaded")}}
	f(false, []codec.Event{overloaded},
		`{"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}`)
	f(false, []codec.Event{{Kind: codec.EventStart, ID: []byte("x")}, {Kind: codec.EventText, Text: []byte("a")}, overloaded},
		`{"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}`)
	f(true, []codec.Event{{Kind: codec.EventStart, ID: []byte("x")}, {Kind: codec.EventText, Text: []byte("a")}, overloaded},
		`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"+
			`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}]}`+"\n\n"+
			`data: {"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}`+"\n\n")
	// An error before anything in a stream is still in-band.
	f(true, []codec.Event{overloaded}, `data: {"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}`+"\n\n")
	// Reset(nil) is allowed and an empty response still ends well-formed.
	var e ChatEncoder
	e.Reset(nil, true)
	out := e.Append(nil, &codec.Event{Kind: codec.EventEnd})
	if err := CheckChatStream(out); err != nil {
		t.Fatalf("empty stream: %v\n%s", err, out)
	}
}
