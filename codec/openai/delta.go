package openai

import "slipstream/codec"

// ChatDeltaOf finds the incremental content of a Chat Completions chunk:
// the first choice's content (key: the choice index) or the arguments of
// its first tool call (key: the choice and tool call index).
func ChatDeltaOf(data []byte) (codec.Delta, bool) {
	el := codec.ArrayElems(codec.Member(data, "choices"))
	choice, ok := el.Next()
	if !ok {
		return codec.Delta{}, false
	}
	ci := codec.IntValue(codec.Member(choice, "index"))
	d := codec.Member(choice, "delta")
	if c := codec.Member(d, "content"); len(c) > 0 && c[0] == '"' {
		return codec.DeltaIn(data, c, ci<<32, 1)
	}
	tc := codec.ArrayElems(codec.Member(d, "tool_calls"))
	call, ok := tc.Next()
	if !ok {
		return codec.Delta{}, false
	}
	ti := codec.IntValue(codec.Member(call, "index"))
	return codec.DeltaIn(data, codec.Member(codec.Member(call, "function"), "arguments"), ci<<32|(ti+1), 2)
}

// ResponsesDeltaOf finds the incremental content of a Responses stream
// event: output text, function call arguments and custom tool input
// deltas, keyed by output and content index.
func ResponsesDeltaOf(data []byte) (codec.Delta, bool) {
	levels := 0
	var out, content, delta []byte
	m := codec.ObjectMembers(data)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			switch string(v) {
			case `"response.output_text.delta"`, `"response.custom_tool_call_input.delta"`:
				levels = 1
			case `"response.function_call_arguments.delta"`:
				levels = 2
			default:
				return codec.Delta{}, false
			}
		case "output_index":
			out = v
		case "content_index":
			content = v
		case "delta":
			delta = v
		}
	}
	if levels == 0 {
		return codec.Delta{}, false
	}
	return codec.DeltaIn(data, delta, codec.IntValue(out)<<32|codec.IntValue(content), levels)
}
