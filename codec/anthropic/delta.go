package anthropic

import "slipstream/codec"

// DeltaOf finds the incremental content of a Messages stream event: the
// text of a text_delta and the partial_json of an input_json_delta, keyed
// by content block index. Thinking deltas are not content a guard may
// touch (a signature covers them) and are not returned. One pass over the
// event's members, and one over its delta's.
func DeltaOf(data []byte) (codec.Delta, bool) {
	var typ, index, delta []byte
	m := codec.ObjectMembers(data)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			if string(v) != `"content_block_delta"` {
				return codec.Delta{}, false
			}
			typ = v
		case "index":
			index = v
		case "delta":
			delta = v
		}
	}
	if typ == nil || delta == nil {
		return codec.Delta{}, false
	}
	var dtype, text, partial []byte
	m = codec.ObjectMembers(delta)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			dtype = v
		case "text":
			text = v
		case "partial_json":
			partial = v
		}
	}
	key := codec.IntValue(index)
	switch string(dtype) {
	case `"text_delta"`:
		return codec.DeltaIn(data, text, key, 1)
	case `"input_json_delta"`:
		return codec.DeltaIn(data, partial, key, 2)
	}
	return codec.Delta{}, false
}
