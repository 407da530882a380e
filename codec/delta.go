package codec

// Delta is the incremental content of one stream event: the raw string
// content (escaped, quotes excluded) at data[Start:End] that continues a
// content stream of the response, Key naming which one (a content block,
// an output item, a tool call), and Levels, how many times it is
// JSON-escaped: 1 for text, 2 for tool-call arguments, which are JSON
// text inside a JSON string. Concatenating the deltas of one key gives the
// content the client assembles. A dialect's DeltaOf finds it.
type Delta struct {
	Start, End int
	Key        int64
	Levels     int
}

// DeltaIn returns the Delta of the string value v, a view into data, or
// false when v is not a string.
func DeltaIn(data, v []byte, key int64, levels int) (Delta, bool) {
	if len(v) < 2 || v[0] != '"' {
		return Delta{}, false
	}
	start := cap(data) - cap(v) + 1 // v is a subslice of data
	return Delta{Start: start, End: start + len(v) - 2, Key: key, Levels: levels}, true
}

// AppendStrings appends a Delta (Key 0) for every string value of the
// JSON value data, at any depth up to 64 (member names are not values):
// Levels 2 for a member named "arguments" or "partial_json", whose
// content is JSON text, 1 otherwise. It is how a whole event or body is
// searched for content.
func AppendStrings(dst []Delta, data []byte) []Delta {
	return appendStrings(dst, data, data, 1, 64)
}

func appendStrings(dst []Delta, data, v []byte, levels, depth int) []Delta {
	if len(v) == 0 || depth == 0 {
		return dst
	}
	switch v[0] {
	case '"':
		if d, ok := DeltaIn(data, v, 0, levels); ok {
			dst = append(dst, d)
		}
	case '{':
		m := ObjectMembers(v)
		for k, mv, ok := m.Next(); ok; k, mv, ok = m.Next() {
			lv := 1
			if string(k) == "arguments" || string(k) == "partial_json" {
				lv = 2
			}
			dst = appendStrings(dst, data, mv, lv, depth-1)
		}
	case '[':
		el := ArrayElems(v)
		for e, ok := el.Next(); ok; e, ok = el.Next() {
			dst = appendStrings(dst, data, e, levels, depth-1)
		}
	}
	return dst
}
