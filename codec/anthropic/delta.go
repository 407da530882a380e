package anthropic

import (
	"bytes"

	"slipstream/codec"
)

// DeltaOf finds the incremental content of a Messages stream event: the
// text of a text_delta and the partial_json of an input_json_delta, keyed
// by content block index. Thinking deltas are not content a guard may
// touch (a signature covers them) and are not returned. An event written
// as the API writes it is read by its prefix; any other in one pass over
// its members and one over its delta's.
func DeltaOf(data []byte) (codec.Delta, bool) {
	if d, ok, sure := deltaAsWritten(data); sure {
		return d, ok
	}
	return deltaOfMembers(data)
}

var (
	deltaHead   = []byte(`{"type":"content_block_delta","index":`)
	typeHead    = []byte(`{"type":"`)
	textHead    = []byte(`,"delta":{"type":"text_delta","text":`)
	partialHead = []byte(`,"delta":{"type":"input_json_delta","partial_json":`)
)

// deltaAsWritten reads data in the API's own member order: sure is false
// when data is not in that form (DeltaOf then reads it member by member).
// An event whose first member is a type other than content_block_delta
// is surely not one.
func deltaAsWritten(data []byte) (d codec.Delta, ok, sure bool) {
	rest, found := bytes.CutPrefix(data, deltaHead)
	if !found {
		return d, false, bytes.HasPrefix(data, typeHead) && !bytes.HasPrefix(data[len(typeHead):], []byte(`content_block_delta"`))
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 9 {
		return d, false, false
	}
	key := codec.IntValue(rest[:n])
	rest = rest[n:]
	levels := 1
	if r, found := bytes.CutPrefix(rest, textHead); found {
		rest = r
	} else if r, found := bytes.CutPrefix(rest, partialHead); found {
		rest, levels = r, 2
	} else {
		return d, false, false
	}
	end := codec.StringEnd(rest, 0) + 1 // just past the closing quote
	if end > len(rest) || string(rest[end:]) != "}}" {
		return d, false, false
	}
	d, ok = codec.DeltaIn(data, rest[:end], key, levels)
	return d, ok, ok
}

// deltaOfMembers is DeltaOf for an event in any member order.
func deltaOfMembers(data []byte) (codec.Delta, bool) {
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
