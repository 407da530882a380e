package openai

import (
	"testing"

	"slipstream/codec"
)

// TestResponsesTailErrorBeforeCreated: a stream that fails before the
// upstream's response.created still starts with one, and its
// response.failed carries created_at and model, so it passes the grammar.
func TestResponsesTailErrorBeforeCreated(t *testing.T) {
	var tail ResponsesTail
	tail.Reset()
	tail.Begin([]byte("gpt-5"), 1767225600)
	e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("upstream returned an error")}
	out := tail.AppendError(nil, &e)
	if err := CheckResponsesStream(out); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
}

// responsesEvents is a Responses stream as relayed verbatim: the tail
// reads the id, creation time and model of response.created, the last
// sequence_number and the terminal event's usage.
var responsesEvents = [][2]string{
	{"response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_7","object":"response","created_at":1767225600,"model":"gpt-5","status":"in_progress","output":[]}}`},
	{"response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_7","output_index":0,"content_index":0,"delta":"a \"quoted\" sequence_number","sequence_number":1}`},
	{"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_7","output_index":0,"content_index":0,"delta":"b"}`},
	{"response.completed", `{"type":"response.completed","sequence_number":3,"response":{"id":"resp_7","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"ab"}]}],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":10},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":32}}}`},
}

func TestResponsesTailObserve(t *testing.T) {
	var tail ResponsesTail
	tail.Reset()
	for i, ev := range responsesEvents {
		tail.Observe([]byte(ev[0]), []byte(ev[1]))
		if tail.seq != int64(i) {
			t.Fatalf("after event %d: seq %d", i, tail.seq)
		}
	}
	if string(tail.id) != "resp_7" || tail.created != 1767225600 || string(tail.model) != "gpt-5" {
		t.Fatalf("id %q created %d model %q", tail.id, tail.created, tail.model)
	}
	want := codec.Usage{Known: true, Input: 30, CacheRead: 10, Output: 2, Reasoning: 1}
	if !tail.Done() || tail.Usage() != want {
		t.Fatalf("done %v usage %+v, want %+v", tail.Done(), tail.Usage(), want)
	}
	evs := responsesEventBytes()
	if n := testing.AllocsPerRun(50, func() {
		tail.Reset()
		for _, ev := range evs {
			tail.Observe(ev[0], ev[1])
		}
	}); n != 0 {
		t.Fatalf("%v allocations per stream, want 0", n)
	}
}

func TestChatTailText(t *testing.T) {
	t.Parallel()
	var tail ChatTail
	tail.Reset()
	tail.Observe(nil, []byte(`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"you\""}}]}`))
	if string(tail.Text()) != `Hi \"you\"` {
		t.Fatalf("text %q", tail.Text())
	}
	tail.Observe(nil, []byte(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
	if tail.Text() != nil {
		t.Fatalf("text %q from a chunk without content", tail.Text())
	}
	tail.Observe(nil, []byte(`{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}`))
	if u := tail.Usage(); !u.Known || u.Input != 9 || u.Output != 3 || tail.Text() != nil {
		t.Fatalf("usage %+v text %q", u, tail.Text())
	}
	tail.Observe(nil, []byte(`[DONE]`))
	if !tail.Done() {
		t.Fatal("not done after [DONE]")
	}
}

// BenchmarkResponsesTailObserve is what the same-dialect relay spends per
// Responses stream on its tail (a Codex turn over HTTP or WebSocket).
func BenchmarkResponsesTailObserve(b *testing.B) {
	evs := responsesEventBytes()
	b.ReportAllocs()
	var tail ResponsesTail
	for b.Loop() {
		tail.Reset()
		for _, ev := range evs {
			tail.Observe(ev[0], ev[1])
		}
	}
}

func responsesEventBytes() [][2][]byte {
	evs := make([][2][]byte, len(responsesEvents))
	for i, ev := range responsesEvents {
		evs[i] = [2][]byte{[]byte(ev[0]), []byte(ev[1])}
	}
	return evs
}
