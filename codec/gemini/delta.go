package gemini

import "slipstream/codec"

// DeltaOf finds the incremental content of a streamed Gemini response:
// the text of the first candidate's first text part that is not a
// thought (key: the candidate index). A function call arrives whole in
// one chunk and is not a delta.
func DeltaOf(data []byte) (codec.Delta, bool) {
	el := codec.ArrayElems(codec.Member(data, "candidates"))
	cand, ok := el.Next()
	if !ok {
		return codec.Delta{}, false
	}
	key := codec.IntValue(codec.Member(cand, "index"))
	parts := codec.ArrayElems(codec.Member(codec.Member(cand, "content"), "parts"))
	for p, ok := parts.Next(); ok; p, ok = parts.Next() {
		if codec.IsTrue(codec.Member(p, "thought")) {
			continue
		}
		if t := codec.Member(p, "text"); t != nil {
			return codec.DeltaIn(data, t, key, 1)
		}
	}
	return codec.Delta{}, false
}
