package anthropic

import "slipstream/codec"

// DeltaOf finds the incremental content of a Messages stream event: the
// text of a text_delta and the partial_json of an input_json_delta, keyed
// by content block index. Thinking deltas are not content a guard may
// touch (a signature covers them) and are not returned.
func DeltaOf(data []byte) (codec.Delta, bool) {
	if string(codec.Member(data, "type")) != `"content_block_delta"` {
		return codec.Delta{}, false
	}
	d := codec.Member(data, "delta")
	key := codec.IntValue(codec.Member(data, "index"))
	switch string(codec.Member(d, "type")) {
	case `"text_delta"`:
		return codec.DeltaIn(data, codec.Member(d, "text"), key, 1)
	case `"input_json_delta"`:
		return codec.DeltaIn(data, codec.Member(d, "partial_json"), key, 2)
	}
	return codec.Delta{}, false
}
