package anthropic

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/pool"
)

// appendDelta writes text or thinking, opening a block of that kind when
// the open block is of another kind or Block (so thinking never lands in a
// text block), or when a thinking block already got its signature.
func (e *Encoder) appendDelta(dst []byte, k openKind, ev *codec.Event) []byte {
	if len(ev.Text) == 0 {
		return dst
	}
	if e.open != k || e.openBlock != ev.Block || (k == openThinking && e.signed) {
		dst = e.openBlockOf(dst, k, ev)
	}
	if !e.stream {
		return append(dst, ev.Text...)
	}
	dst = e.deltaHead(dst)
	if k == openText {
		dst = append(dst, `"text_delta","text":"`...)
	} else {
		dst = append(dst, `"thinking_delta","thinking":"`...)
	}
	dst = append(dst, ev.Text...)
	return deltaTail(dst)
}

// appendSignature writes a thinking block's signature, opening an empty
// thinking block when none is open for ev.Block (an upstream that sends
// only a replay token).
func (e *Encoder) appendSignature(dst []byte, ev *codec.Event) []byte {
	if len(ev.Text) == 0 {
		return dst
	}
	if e.open != openThinking || e.openBlock != ev.Block {
		dst = e.openBlockOf(dst, openThinking, ev)
	}
	if !e.stream {
		if !e.signed {
			dst = append(dst, `","signature":"`...)
		}
		e.signed = true
		return append(dst, ev.Text...)
	}
	e.signed = true
	dst = e.deltaHead(dst)
	dst = append(dst, `"signature_delta","signature":"`...)
	dst = append(dst, ev.Text...)
	return deltaTail(dst)
}

// appendRedacted writes a complete redacted_thinking block.
func (e *Encoder) appendRedacted(dst []byte, ev *codec.Event) []byte {
	dst = e.closeBlock(dst)
	idx := e.next
	e.next++
	if !e.stream {
		dst = e.bodySep(dst, idx)
		dst = append(dst, `{"type":"redacted_thinking","data":`...)
		dst = codec.AppendString(dst, ev.Text)
		return append(dst, '}')
	}
	dst = e.startHead(dst, idx)
	dst = append(dst, `{"type":"redacted_thinking","data":`...)
	dst = codec.AppendString(dst, ev.Text)
	dst = append(dst, "}}"...)
	dst = sse.AppendEventEnd(dst)
	return appendStop(dst, idx)
}

// appendToolCall opens a tool_use block. A free-text tool is shown as a
// function of one string "input", so its text is wrapped in {"input":"..."}.
func (e *Encoder) appendToolCall(dst []byte, ev *codec.Event) []byte {
	dst = e.openBlockOf(dst, openTool, ev)
	e.sawTool = true
	e.custom = ev.Custom
	e.args = e.args[:0]
	if e.stream && e.custom {
		dst = e.appendJSONDelta(dst, []byte(`{\"input\":\"`))
	}
	return dst
}

// appendArgs writes an argument fragment of the open tool block; a
// fragment for no open call is dropped.
func (e *Encoder) appendArgs(dst []byte, ev *codec.Event) []byte {
	if e.open != openTool || e.openBlock != ev.Block || len(ev.Text) == 0 {
		return dst
	}
	if !e.stream {
		e.args = append(e.args, ev.Text...)
		return dst
	}
	if !e.custom {
		return e.appendJSONDelta(dst, ev.Text)
	}
	dst = e.deltaHead(dst)
	dst = append(dst, `"input_json_delta","partial_json":"`...)
	dst = codec.AppendEscaped(dst, ev.Text)
	return deltaTail(dst)
}

// appendJSONDelta writes an input_json_delta whose partial_json content is
// the escaped fragment esc.
func (e *Encoder) appendJSONDelta(dst, esc []byte) []byte {
	dst = e.deltaHead(dst)
	dst = append(dst, `"input_json_delta","partial_json":"`...)
	dst = append(dst, esc...)
	return deltaTail(dst)
}

// openBlockOf closes the open block and starts a block of kind k for ev.
func (e *Encoder) openBlockOf(dst []byte, k openKind, ev *codec.Event) []byte {
	dst = e.closeBlock(dst)
	e.open, e.openBlock, e.cur, e.signed = k, ev.Block, e.next, false
	e.next++
	if !e.stream {
		dst = e.bodySep(dst, e.cur)
	} else {
		dst = e.startHead(dst, e.cur)
	}
	switch k {
	case openText:
		dst = append(dst, `{"type":"text","text":"`...)
	case openThinking:
		dst = append(dst, `{"type":"thinking","thinking":"`...)
	case openTool:
		dst = append(dst, `{"type":"tool_use","id":`...)
		dst = e.appendToolID(dst, ev)
		dst = append(dst, `,"name":`...)
		dst = codec.AppendString(dst, ev.Name)
		dst = append(dst, `,"input":`...)
	}
	if !e.stream {
		return dst
	}
	switch k {
	case openText:
		dst = append(dst, `"}}`...)
	case openThinking:
		dst = append(dst, `","signature":""}}`...)
	case openTool:
		dst = append(dst, "{}}}"...)
	}
	return sse.AppendEventEnd(dst)
}

// appendToolID writes the call id, or one minted from the message id and
// the block index when the upstream gave none.
func (e *Encoder) appendToolID(dst []byte, ev *codec.Event) []byte {
	if len(ev.ID) > 0 {
		return codec.AppendString(dst, ev.ID)
	}
	dst = append(dst, `"toolu_`...)
	dst = append(dst, e.msgID...)
	dst = append(dst, '_')
	dst = codec.AppendInt(dst, int64(e.cur))
	return append(dst, '"')
}

// closeBlock ends the open block, if any.
func (e *Encoder) closeBlock(dst []byte) []byte {
	k := e.open
	if k == openNone {
		return dst
	}
	e.open = openNone
	if e.stream {
		if k == openTool && e.custom {
			dst = e.appendJSONDelta(dst, []byte(`\"}`))
		}
		return appendStop(dst, e.cur)
	}
	switch k {
	case openText:
		return append(dst, `"}`...)
	case openThinking:
		if !e.signed {
			dst = append(dst, `","signature":"`...)
		}
		return append(dst, `"}`...)
	}
	return e.appendInput(dst)
}

// appendInput writes a non-streamed tool_use input from the collected
// fragments: a free-text tool's text as {"input":"..."}, otherwise the
// unescaped JSON when it is an object, {} when empty, and
// {"_raw":"<fragments>"} when it is not valid JSON.
func (e *Encoder) appendInput(dst []byte) []byte {
	if e.custom {
		dst = append(dst, `{"input":"`...)
		dst = append(dst, e.args...)
		return append(dst, `"}}`...)
	}
	mark := len(dst)
	dst, err := codec.AppendUnescaped(dst, e.args)
	v := dst[mark:]
	switch {
	case err == nil && isBlank(v):
		dst = append(dst[:mark], "{}"...)
	case err != nil || !isObject(v) || !gjson.Valid(pool.B2S(v)):
		dst = append(dst[:mark], `{"_raw":`...)
		dst = codec.AppendString(dst, e.args)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// bodySep writes the comma before every block but the first.
func (e *Encoder) bodySep(dst []byte, idx int) []byte {
	if idx > 0 {
		dst = append(dst, ',')
	}
	return dst
}

// startHead begins a content_block_start event up to content_block's value.
func (e *Encoder) startHead(dst []byte, idx int) []byte {
	dst = sse.AppendEventStart(dst, "content_block_start")
	dst = append(dst, `{"type":"content_block_start","index":`...)
	dst = codec.AppendInt(dst, int64(idx))
	return append(dst, `,"content_block":`...)
}

// deltaHead begins a content_block_delta event for the open block up to
// the delta's type value.
func (e *Encoder) deltaHead(dst []byte) []byte {
	dst = sse.AppendEventStart(dst, "content_block_delta")
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = codec.AppendInt(dst, int64(e.cur))
	return append(dst, `,"delta":{"type":`...)
}

// deltaTail closes a delta's string field and the event.
func deltaTail(dst []byte) []byte {
	dst = append(dst, `"}}`...)
	return sse.AppendEventEnd(dst)
}

func appendStop(dst []byte, idx int) []byte {
	dst = sse.AppendEventStart(dst, "content_block_stop")
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = codec.AppendInt(dst, int64(idx))
	dst = append(dst, '}')
	return sse.AppendEventEnd(dst)
}
