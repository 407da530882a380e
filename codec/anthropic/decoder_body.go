package anthropic

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// DecodeBody appends the whole Event sequence of a non-streamed Messages
// response (https://docs.anthropic.com/en/api/messages), or one EventError for an error body.
// Events borrow from body and from d until the next call on d.
func (d *Decoder) DecodeBody(dst []codec.Event, body []byte) ([]codec.Event, error) {
	d.Reset()
	root := gjson.Parse(pool.B2S(body))
	if !gjson.Valid(pool.B2S(body)) || !root.IsObject() {
		return dst, ErrBadEvent
	}
	if root.Get("type").Str == "error" {
		d.ended = true
		return append(dst, codec.Event{Kind: codec.EventError, Err: decodeErrorEvent(body)}), nil
	}
	dst = d.messageStart(dst, root)
	i := 0
	root.Get("content").ForEach(func(_, b gjson.Result) bool {
		dst = d.bodyBlock(dst, i, b)
		i++
		return true
	})
	d.finished = true
	dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: stopReason(root.Get("stop_reason").Str),
		Text: str(root, "stop_sequence"), Usage: d.usage()})
	d.ended = true
	return append(dst, codec.Event{Kind: codec.EventEnd, Usage: d.usage()}), nil
}

// bodyBlock appends the events of one complete content block: the same
// ones a stream of it would produce, then EventBlockStop.
func (d *Decoder) bodyBlock(dst []codec.Event, i int, b gjson.Result) []codec.Event {
	n := len(dst)
	switch b.Get("type").Str {
	case "text":
		dst = appendText(dst, codec.EventText, i, str(b, "text"))
	case "thinking":
		dst = appendText(dst, codec.EventThinking, i, str(b, "thinking"))
		dst = appendText(dst, codec.EventSignature, i, str(b, "signature"))
	case "redacted_thinking":
		dst = append(dst, codec.Event{Kind: codec.EventRedacted, Block: i, Text: str(b, "data")})
	case "tool_use":
		dst = append(dst, codec.Event{Kind: codec.EventToolCall, Block: i, ID: str(b, "id"),
			Name: str(b, "name")})
		dst = d.appendInput(dst, i, b.Get("input"))
	}
	if len(dst) == n {
		return dst
	}
	return append(dst, codec.Event{Kind: codec.EventBlockStop, Block: i})
}
