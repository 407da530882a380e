package gemini

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata (review them by eye)")

// clientReq is the client request the encoder tests answer.
var clientReq = codec.Request{Model: []byte("gemini-client-model"), Created: 1700000000}

// encodeEvents runs events through a fresh Encoder.
func encodeEvents(stream bool, evs []codec.Event) []byte {
	var e Encoder
	e.Reset(&clientReq, stream)
	var out []byte
	for i := range evs {
		out = e.Append(out, &evs[i])
	}
	return out
}

// translateStream decodes a Gemini upstream stream and encodes it for a
// Gemini client, event by event.
func translateStream(t testing.TB, upstream []byte, stream bool) []byte {
	t.Helper()
	var d Decoder
	var e Encoder
	e.Reset(&clientReq, stream)
	var rd sse.Reader
	rd.Reset(bytes.NewReader(upstream))
	defer rd.Release()
	var evs []codec.Event
	var out []byte
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data); err != nil {
			continue
		}
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
	}
	evs = d.End(evs[:0])
	for i := range evs {
		out = e.Append(out, &evs[i])
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestEncoderGolden(t *testing.T) {
	for _, name := range []string{"stream_text", "stream_tool", "stream_thinking", "stream_error", "stream_truncated", "stream_safety"} {
		out := translateStream(t, readTestdata(t, name+".sse"), true)
		if err := CheckStream(out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		golden(t, "encoded_"+name+".sse", out)
		body := translateStream(t, readTestdata(t, name+".sse"), false)
		if !gjson.ValidBytes(body) {
			t.Fatalf("%s: invalid body %s", name, body)
		}
		golden(t, "encoded_"+name+".json", body)
	}
}

// anthropicEvents is what an Anthropic upstream turn with thinking, text
// and a streamed tool call decodes to.
var anthropicEvents = []codec.Event{
	{Kind: codec.EventStart, ID: []byte("msg_01"), Name: []byte("claude-x"), Usage: codec.Usage{Input: 100, CacheRead: 40, Known: true}},
	{Kind: codec.EventThinking, Block: 0, Text: []byte("Let me ")},
	{Kind: codec.EventThinking, Block: 0, Text: []byte("think.")},
	{Kind: codec.EventSignature, Block: 0, Text: []byte("EqQBsig")},
	{Kind: codec.EventBlockStop, Block: 0},
	{Kind: codec.EventText, Block: 1, Text: []byte(`Running \"ls\".`)},
	{Kind: codec.EventBlockStop, Block: 1},
	{Kind: codec.EventToolCall, Block: 2, ID: []byte("toolu_01"), Name: []byte("Bash")},
	{Kind: codec.EventToolArgs, Block: 2, Text: []byte(`{\"comm`)},
	{Kind: codec.EventToolArgs, Block: 2, Text: []byte(`and\": \"ls -la\"}`)},
	{Kind: codec.EventBlockStop, Block: 2},
	{Kind: codec.EventToolCall, Block: 3, ID: []byte("toolu_02"), Name: []byte("Broken")},
	{Kind: codec.EventToolArgs, Block: 3, Text: []byte(`{\"a\":`)},
	{Kind: codec.EventFinish, Stop: codec.StopToolUse, Usage: codec.Usage{Output: 50, Reasoning: 20, Known: true}},
	{Kind: codec.EventEnd},
}

func TestEncoderEvents(t *testing.T) {
	f := func(stream bool, evs []codec.Event, want string) {
		t.Helper()
		got := encodeEvents(stream, evs)
		if string(got) != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
		if stream {
			if err := CheckStream(got); err != nil {
				t.Fatalf("CheckStream: %v\n%s", err, got)
			}
		} else if !gjson.ValidBytes(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
	}
	const ids = `"modelVersion":"gemini-client-model","responseId":"msg_01"}`
	f(true, anthropicEvents,
		`data: {"candidates":[{"content":{"role":"model","parts":[{"thought":true,"text":"Let me "}]},"index":0}],`+ids+"\n\n"+
			`data: {"candidates":[{"content":{"role":"model","parts":[{"thought":true,"text":"think."}]},"index":0}],`+ids+"\n\n"+
			`data: {"candidates":[{"content":{"role":"model","parts":[{"thought":true,"text":"","thoughtSignature":"EqQBsig"}]},"index":0}],`+ids+"\n\n"+
			`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Running \"ls\"."}]},"index":0}],`+ids+"\n\n"+
			`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"toolu_01","name":"Bash","args":{"command": "ls -la"}}}]},"index":0}],`+ids+"\n\n"+
			`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"toolu_02","name":"Broken","args":{"_raw":"{\"a\":"}}}]},"index":0}],`+ids+"\n\n"+
			`data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],`+
			`"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":40,"candidatesTokenCount":30,"thoughtsTokenCount":20,"totalTokenCount":150},`+ids+"\n\n")
	f(false, anthropicEvents,
		`{"candidates":[{"content":{"role":"model","parts":[{"thought":true,"text":"Let me think.","thoughtSignature":"EqQBsig"},{"text":"Running \"ls\"."},`+
			`{"functionCall":{"id":"toolu_01","name":"Bash","args":{"command": "ls -la"}}},{"functionCall":{"id":"toolu_02","name":"Broken","args":{"_raw":"{\"a\":"}}}]},`+
			`"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":40,"candidatesTokenCount":30,"thoughtsTokenCount":20,"totalTokenCount":150},`+ids)

	// A custom (free-text) tool call becomes {"input": text}; max tokens.
	custom := []codec.Event{
		{Kind: codec.EventStart, ID: []byte("resp_1")},
		{Kind: codec.EventToolCall, Block: 0, ID: []byte("call_1"), Name: []byte("apply_patch"), Custom: true},
		{Kind: codec.EventToolArgs, Block: 0, Text: []byte(`*** Begin Patch\n`)},
		{Kind: codec.EventFinish, Stop: codec.StopMaxTokens},
		{Kind: codec.EventEnd},
	}
	f(false, custom, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"apply_patch","args":{"input":"*** Begin Patch\n"}}}]},`+
		`"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":0,"candidatesTokenCount":0,"totalTokenCount":0},"modelVersion":"gemini-client-model","responseId":"resp_1"}`)

	// Errors: before anything (body), mid-body, mid-stream.
	overloaded := codec.Event{Kind: codec.EventError, Err: codec.Error{Status: 529, Kind: codec.ErrOverloaded, Message: []byte("Overloaded")}}
	f(false, []codec.Event{overloaded}, `{"error":{"code":529,"message":"Overloaded","status":"UNAVAILABLE"}}`)
	f(false, []codec.Event{{Kind: codec.EventStart, ID: []byte("m")}, {Kind: codec.EventText, Text: []byte("Hi")}, overloaded},
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"OTHER","index":0}],"error":{"code":529,"message":"Overloaded","status":"UNAVAILABLE"}}`)
	f(true, []codec.Event{{Kind: codec.EventStart, ID: []byte("m")}, {Kind: codec.EventText, Text: []byte("Hi")}, overloaded, {Kind: codec.EventEnd}},
		`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"index":0}],"modelVersion":"gemini-client-model","responseId":"m"}`+"\n\n"+
			`data: {"error":{"code":529,"message":"Overloaded","status":"UNAVAILABLE"}}`+"\n\n")
}
