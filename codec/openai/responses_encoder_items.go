package openai

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// open starts a new output item of kind for the upstream block, closing
// the open one first (items are sequential), and mints its id.
func (e *ResponsesEncoder) open(dst []byte, kind responsesItemKind, block int) []byte {
	dst = e.closeItem(dst)
	it := &e.item
	it.kind, it.block, it.partOpen, it.argsJSON, it.ns = kind, block, false, false, nil
	it.acc, it.sig = it.acc[:0], it.sig[:0]
	switch kind {
	case respItemMessage:
		it.id = e.stemID(append(it.id[:0], "msg_"...))
	case respItemReasoning:
		it.id = e.stemID(append(it.id[:0], "rs_"...))
	}
	return dst
}

// stemID appends the id stem and the output index: <stem>_<n>.
func (e *ResponsesEncoder) stemID(dst []byte) []byte {
	dst = append(dst, e.core...)
	dst = append(dst, '_')
	return codec.AppendInt(dst, int64(e.items))
}

// itemEvent starts an event about the open item: item_id and output_index.
func (e *ResponsesEncoder) itemEvent(dst []byte, typ string) []byte {
	dst = e.event(dst, typ)
	dst = append(dst, `,"item_id":`...)
	dst = codec.AppendString(dst, e.item.id)
	dst = append(dst, `,"output_index":`...)
	return codec.AppendInt(dst, int64(e.items))
}

// added writes output_item.added for the open item, whose in-progress JSON
// the caller appends via item.
func (e *ResponsesEncoder) added(dst []byte) []byte {
	dst = e.event(dst, "response.output_item.added")
	dst = append(dst, `,"output_index":`...)
	dst = codec.AppendInt(dst, int64(e.items))
	dst = append(dst, `,"item":`...)
	dst = e.appendItem(dst, false)
	return e.eventEnd(dst)
}

func (e *ResponsesEncoder) text(dst []byte, ev *codec.Event) []byte {
	if len(ev.Text) == 0 {
		return dst
	}
	it := &e.item
	if it.kind != respItemMessage || it.block != ev.Block {
		dst = e.open(dst, respItemMessage, ev.Block)
		if e.stream {
			dst = e.added(dst)
			dst = e.itemEvent(dst, "response.content_part.added")
			dst = append(dst, `,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`...)
			dst = e.eventEnd(dst)
		}
	}
	it.acc = append(it.acc, ev.Text...)
	if !e.stream {
		return dst
	}
	dst = e.itemEvent(dst, "response.output_text.delta")
	dst = append(dst, `,"content_index":0,"delta":`...)
	dst = codec.AppendString(dst, ev.Text)
	dst = append(dst, `,"logprobs":[]`...)
	return e.eventEnd(dst)
}

func (e *ResponsesEncoder) openReasoning(dst []byte, block int) []byte {
	dst = e.open(dst, respItemReasoning, block)
	if e.stream {
		dst = e.added(dst)
	}
	return dst
}

func (e *ResponsesEncoder) thinking(dst []byte, ev *codec.Event) []byte {
	if len(ev.Text) == 0 {
		return dst
	}
	it := &e.item
	if it.kind != respItemReasoning || it.block != ev.Block {
		dst = e.openReasoning(dst, ev.Block)
	}
	if !it.partOpen {
		it.partOpen = true
		if e.stream {
			dst = e.itemEvent(dst, "response.reasoning_summary_part.added")
			dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":""}`...)
			dst = e.eventEnd(dst)
		}
	}
	it.acc = append(it.acc, ev.Text...)
	if !e.stream {
		return dst
	}
	dst = e.itemEvent(dst, "response.reasoning_summary_text.delta")
	dst = append(dst, `,"summary_index":0,"delta":`...)
	dst = codec.AppendString(dst, ev.Text)
	return e.eventEnd(dst)
}

// signature attaches a replay token (or redacted thinking data) to the
// open reasoning item, opening one when none is.
func (e *ResponsesEncoder) signature(dst []byte, ev *codec.Event) []byte {
	if e.item.kind != respItemReasoning {
		dst = e.openReasoning(dst, ev.Block)
	}
	e.item.sig = append(e.item.sig, ev.Text...)
	return dst
}

func (e *ResponsesEncoder) toolCall(dst []byte, ev *codec.Event) []byte {
	kind := respItemFunction
	t := e.req.FindTool(ev.Name)
	if ev.Custom || t != nil && t.Kind == codec.ToolCustom {
		kind = respItemCustom
	}
	dst = e.open(dst, kind, ev.Block)
	it := &e.item
	it.argsJSON = kind == respItemCustom && !ev.Custom
	it.callID = append(it.callID[:0], ev.ID...)
	name := ev.Name
	if ns, inner, ok := splitFlatName(e.req, name); ok && kind == respItemFunction {
		it.ns, name = ns, inner
	}
	it.name = append(it.name[:0], name...)
	if kind == respItemCustom {
		it.id = append(append(it.id[:0], "ctc_"...), ev.ID...)
	} else {
		it.id = append(append(it.id[:0], "fc_"...), ev.ID...)
	}
	if e.stream {
		dst = e.added(dst)
	}
	return dst
}

func (e *ResponsesEncoder) toolArgs(dst []byte, ev *codec.Event) []byte {
	it := &e.item
	if it.kind != respItemFunction && it.kind != respItemCustom || it.block != ev.Block {
		return dst // arguments of a call that is no longer open: Responses cannot interleave
	}
	it.acc = append(it.acc, ev.Text...)
	if !e.stream || it.argsJSON || len(ev.Text) == 0 {
		return dst
	}
	if it.kind == respItemCustom {
		dst = e.itemEvent(dst, "response.custom_tool_call_input.delta")
	} else {
		dst = e.itemEvent(dst, "response.function_call_arguments.delta")
	}
	dst = append(dst, `,"delta":`...)
	dst = codec.AppendString(dst, ev.Text)
	return e.eventEnd(dst)
}

// closeItem finishes the open item: its .done events, then the finished
// item into the output and output_item.done.
func (e *ResponsesEncoder) closeItem(dst []byte) []byte {
	it := &e.item
	if it.kind == respItemNone {
		return dst
	}
	if it.kind == respItemCustom && it.argsJSON {
		e.customInput()
	}
	if e.stream {
		dst = e.doneParts(dst)
	}
	if e.items > 0 {
		e.out = append(e.out, ',')
	}
	start := len(e.out)
	e.out = e.appendItem(e.out, true)
	if e.stream {
		dst = e.event(dst, "response.output_item.done")
		dst = append(dst, `,"output_index":`...)
		dst = codec.AppendInt(dst, int64(e.items))
		dst = append(dst, `,"item":`...)
		dst = append(dst, e.out[start:]...)
		dst = e.eventEnd(dst)
	}
	e.items++
	it.kind = respItemNone
	return dst
}

// doneParts writes the .done events that precede output_item.done.
func (e *ResponsesEncoder) doneParts(dst []byte) []byte {
	it := &e.item
	switch it.kind {
	case respItemMessage:
		dst = e.itemEvent(dst, "response.output_text.done")
		dst = append(dst, `,"content_index":0,"text":`...)
		dst = codec.AppendString(dst, it.acc)
		dst = append(dst, `,"logprobs":[]`...)
		dst = e.eventEnd(dst)
		dst = e.itemEvent(dst, "response.content_part.done")
		dst = append(dst, `,"content_index":0,"part":{"type":"output_text","text":`...)
		dst = codec.AppendString(dst, it.acc)
		dst = append(dst, `,"annotations":[]}`...)
		return e.eventEnd(dst)
	case respItemReasoning:
		if !it.partOpen {
			return dst
		}
		dst = e.itemEvent(dst, "response.reasoning_summary_text.done")
		dst = append(dst, `,"summary_index":0,"text":`...)
		dst = codec.AppendString(dst, it.acc)
		dst = e.eventEnd(dst)
		dst = e.itemEvent(dst, "response.reasoning_summary_part.done")
		dst = append(dst, `,"summary_index":0,"part":{"type":"summary_text","text":`...)
		dst = codec.AppendString(dst, it.acc)
		return e.eventEnd(append(dst, '}'))
	case respItemFunction:
		dst = e.itemEvent(dst, "response.function_call_arguments.done")
		dst = append(dst, `,"name":`...)
		dst = codec.AppendString(dst, it.name)
		dst = append(dst, `,"arguments":`...)
		dst = e.appendArgs(dst)
		return e.eventEnd(dst)
	case respItemCustom:
		if it.argsJSON && len(it.acc) > 0 {
			// a function-only upstream gave no free-text deltas: send it whole
			dst = e.itemEvent(dst, "response.custom_tool_call_input.delta")
			dst = append(dst, `,"delta":`...)
			dst = codec.AppendString(dst, it.acc)
			dst = e.eventEnd(dst)
		}
		dst = e.itemEvent(dst, "response.custom_tool_call_input.done")
		dst = append(dst, `,"input":`...)
		dst = codec.AppendString(dst, it.acc)
		return e.eventEnd(dst)
	}
	return dst
}

// appendArgs appends the accumulated function arguments as a JSON string;
// a call without arguments gets "{}" (Codex parses them as JSON).
func (e *ResponsesEncoder) appendArgs(dst []byte) []byte {
	if len(e.item.acc) == 0 {
		return append(dst, `"{}"`...)
	}
	return codec.AppendString(dst, e.item.acc)
}

// customInput replaces the accumulated JSON arguments of a custom call
// with the free text they carry: the `input` member when it is a string,
// the member's JSON text otherwise, and the arguments text as is when they
// are not an object with an `input`.
func (e *ResponsesEncoder) customInput() {
	it := &e.item
	var err error
	e.scratch, err = codec.AppendUnescaped(e.scratch[:0], it.acc)
	if err != nil || !gjson.Valid(pool.B2S(e.scratch)) {
		return
	}
	in := codec.Member(e.scratch, "input") // gjson.Get would unescape (allocate)
	switch {
	case len(in) > 0 && in[0] == '"':
		it.acc = append(it.acc[:0], codec.StrContent(in)...)
	case len(in) > 0:
		it.acc = codec.AppendEscaped(it.acc[:0], in)
	}
}

// appendItem appends the open item as JSON: in progress (for
// output_item.added) or finished.
func (e *ResponsesEncoder) appendItem(dst []byte, finished bool) []byte {
	it := &e.item
	dst = append(dst, `{"id":`...)
	dst = codec.AppendString(dst, it.id)
	switch it.kind {
	case respItemMessage:
		dst = append(dst, `,"type":"message","status":`...)
		if !finished {
			return append(dst, `"in_progress","content":[],"role":"assistant"}`...)
		}
		dst = append(dst, `"completed","content":[{"type":"output_text","text":`...)
		dst = codec.AppendString(dst, it.acc)
		return append(dst, `,"annotations":[]}],"role":"assistant"}`...)
	case respItemReasoning:
		dst = append(dst, `,"type":"reasoning","summary":[`...)
		if finished && it.partOpen {
			dst = append(dst, `{"type":"summary_text","text":`...)
			dst = codec.AppendString(dst, it.acc)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
		if finished && len(it.sig) > 0 {
			dst = append(dst, `,"encrypted_content":`...)
			dst = codec.AppendString(dst, it.sig)
		}
		return append(dst, '}')
	case respItemFunction:
		dst = append(dst, `,"type":"function_call","status":`...)
		if finished {
			dst = append(dst, `"completed","arguments":`...)
			dst = e.appendArgs(dst)
		} else {
			dst = append(dst, `"in_progress","arguments":""`...)
		}
	case respItemCustom:
		dst = append(dst, `,"type":"custom_tool_call","status":`...)
		if finished {
			dst = append(dst, `"completed","input":`...)
			dst = codec.AppendString(dst, it.acc)
		} else {
			dst = append(dst, `"in_progress","input":""`...)
		}
	}
	dst = append(dst, `,"call_id":`...)
	dst = codec.AppendString(dst, it.callID)
	dst = append(dst, `,"name":`...)
	dst = codec.AppendString(dst, it.name)
	if len(it.ns) > 0 {
		dst = append(dst, `,"namespace":`...)
		dst = codec.AppendString(dst, it.ns)
	}
	return append(dst, '}')
}
