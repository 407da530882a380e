package anthropic

import (
	"testing"

	"slipstream/codec"
)

// streamEvents is an Anthropic stream as the API sends it: usage in
// message_start, updated by message_delta (which carries only the fields
// that changed).
var streamEvents = [][2]string{
	{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2900,"cache_creation_input_tokens":100,"cache_read_input_tokens":4000,"output_tokens":1,"service_tier":"standard"}}}`},
	{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"usage: this text is not a count"}}`},
	{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":80,"output_tokens_details":{"thinking_tokens":30}}}`},
	{"message_stop", `{"type":"message_stop"}`},
}

func TestTailUsage(t *testing.T) {
	var tl Tail
	tl.Reset()
	for _, ev := range streamEvents {
		if tl.Done() {
			t.Fatalf("done before %s", ev[0])
		}
		tl.Observe([]byte(ev[0]), []byte(ev[1]))
	}
	want := codec.Usage{Input: 7000, CacheRead: 4000, CacheWrite: 100, Output: 80, Reasoning: 30, Known: true}
	if got := tl.Usage(); got != want || !tl.Done() {
		t.Fatalf("usage %+v done %v, want %+v", got, tl.Done(), want)
	}
	// A usage object that is not one, or counts that are not numbers,
	// change nothing.
	tl.Reset()
	tl.Observe([]byte("message_start"), []byte(`{"message":{"usage":"many"}}`))
	tl.Observe([]byte("message_delta"), []byte(`{"usage":{"output_tokens":"80","input_tokens":null}}`))
	if got := tl.Usage(); got.Input != 0 || got.Output != 0 {
		t.Fatalf("usage %+v from values that are not counts", got)
	}
	if got := ReadUsage([]byte(`{"input_tokens":3,"output_tokens":1}`)); got != (codec.Usage{Input: 3, Output: 1, Known: true}) {
		t.Fatalf("ReadUsage = %+v", got)
	}
}
