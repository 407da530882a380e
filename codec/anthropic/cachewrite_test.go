package anthropic

import (
	"testing"

	"slipstream/codec"
)

// TestCacheWriteOneHour: the part of cache_creation_input_tokens written
// to the one-hour cache (cache_creation.ephemeral_1h_input_tokens) is
// read by the stream decoder and by the same-dialect tail, so a one-hour
// write can be priced at its own rate; it is never more than the writes.
func TestCacheWriteOneHour(t *testing.T) {
	const start = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":300,"cache_read_input_tokens":40,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200},"output_tokens":1}}}`
	want := codec.Usage{Input: 350, CacheRead: 40, CacheWrite: 300, CacheWrite1h: 200, Output: 1, Known: true}
	var tl Tail
	tl.Reset()
	tl.Observe([]byte("message_start"), []byte(start))
	if got := tl.Usage(); got != want {
		t.Fatalf("tail usage %+v, want %+v", got, want)
	}
	var d Decoder
	d.Reset()
	evs, err := d.DecodeEvent(nil, []byte("message_start"), []byte(start))
	if err != nil || len(evs) == 0 || evs[0].Usage != want {
		t.Fatalf("decoder: %v %+v, want %+v", err, evs, want)
	}
	got := ReadUsage([]byte(`{"input_tokens":1,"cache_creation_input_tokens":5,"cache_creation":{"ephemeral_1h_input_tokens":9}}`))
	if got.CacheWrite1h != 5 {
		t.Fatalf("a one-hour part larger than the writes: %+v", got)
	}
}
