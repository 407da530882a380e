package openai

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// ResponsesEncoder writes codec.Events as a Responses API response, the
// way Codex and the OpenAI SDKs read it (https://platform.openai.com/docs/api-reference/responses-streaming).
//
// Streaming: response.created and response.in_progress first, then one
// output item at a time (output_item.added, its parts and deltas, their
// .done events, output_item.done), sequence_number counting from 0, and at
// EventEnd response.completed (or response.incomplete with
// incomplete_details.reason max_output_tokens / content_filter) carrying
// the whole output and integer usage. EventError becomes response.failed
// with response.error {code, message}; no `event: error` precedes it, since
// the SDKs throw on that and never read response.failed.
//
// Not streaming: the same state machine fills the output, and EventEnd
// writes the response object; EventError writes the error body.
//
// Ids are minted from the upstream id (EventStart.ID): resp_<id> (kept as
// is when it already starts with resp_), msg_<id>_<n> and rs_<id>_<n> for
// the item at output index n, fc_<call id> and ctc_<call id> for tool
// calls (call_id is the upstream call id). A call of a tool that is custom
// in the client's request becomes a custom_tool_call whose input is the
// free text (a custom upstream call) or the `input` member of the JSON
// arguments (a function-only upstream). A call of a tool flattened from a
// namespace gets its nested name and `namespace` back.
//
// The zero value is not usable; call Reset. Append allocates nothing once
// its buffers have grown to the size of the response.
type ResponsesEncoder struct {
	req     *codec.Request
	stream  bool
	started bool
	done    bool
	seq     int64

	core []byte // upstream id without a resp_ prefix: the id stem

	out   []byte // finished output items, comma separated
	items int    // number of finished items: the next output_index

	item respOpenItem

	usage   codec.Usage
	stop    codec.StopReason
	scratch []byte // unescaped arguments of a custom call
}

var _ codec.Encoder = (*ResponsesEncoder)(nil)

// respOpenItem is the output item being streamed. Byte fields are the
// encoder's own copies.
type respOpenItem struct {
	kind     responsesItemKind
	block    int
	id       []byte
	callID   []byte
	name     []byte // tool name as the client knows it (nested name for namespaces)
	ns       []byte // namespace of a flattened tool, a view into req.Scratch
	acc      []byte // text, summary, arguments or input so far (escaped)
	sig      []byte // reasoning replay token
	partOpen bool   // message content part / reasoning summary part opened
	argsJSON bool   // custom call fed JSON arguments by a function-only upstream
}

// respBufCap is the capacity above which Reset drops a buffer instead of
// keeping it for the next response.
const respBufCap = 1 << 20

// Reset prepares e for a response to req (borrowed until Done).
func (e *ResponsesEncoder) Reset(req *codec.Request, stream bool) {
	*e = ResponsesEncoder{
		req:     req,
		stream:  stream,
		core:    respKeep(e.core),
		out:     respKeep(e.out),
		scratch: respKeep(e.scratch),
		item: respOpenItem{
			id:     respKeep(e.item.id),
			callID: respKeep(e.item.callID),
			name:   respKeep(e.item.name),
			acc:    respKeep(e.item.acc),
			sig:    respKeep(e.item.sig),
		},
	}
}

// respKeep empties b, dropping it when it grew past respBufCap.
func respKeep(b []byte) []byte {
	if cap(b) > respBufCap {
		return nil
	}
	return b[:0]
}

// Done reports whether the terminal output has been written.
func (e *ResponsesEncoder) Done() bool { return e.done }

// Append appends the output for ev to dst.
func (e *ResponsesEncoder) Append(dst []byte, ev *codec.Event) []byte {
	if e.done {
		return dst
	}
	if ev.Kind == codec.EventStart {
		return e.begin(dst, ev.ID)
	}
	if ev.Kind == codec.EventError && !e.stream {
		e.done = true
		return AppendErrorObject(dst, &ev.Err)
	}
	dst = e.begin(dst, nil)
	switch ev.Kind {
	case codec.EventText:
		dst = e.text(dst, ev)
	case codec.EventThinking:
		dst = e.thinking(dst, ev)
	case codec.EventSignature, codec.EventRedacted:
		dst = e.signature(dst, ev)
	case codec.EventToolCall:
		dst = e.toolCall(dst, ev)
	case codec.EventToolArgs:
		dst = e.toolArgs(dst, ev)
	case codec.EventBlockStop:
		if e.item.kind != respItemNone && e.item.block == ev.Block {
			dst = e.closeItem(dst)
		}
	case codec.EventUsage:
		e.usage.Merge(&ev.Usage)
	case codec.EventFinish:
		e.stop = ev.Stop
		e.usage.Merge(&ev.Usage)
		dst = e.closeItem(dst)
	case codec.EventEnd:
		dst = e.end(dst)
	case codec.EventError:
		dst = e.fail(dst, &ev.Err)
	}
	return dst
}

// begin writes response.created and response.in_progress once. id is the
// upstream response id (nil when the first event was not EventStart).
func (e *ResponsesEncoder) begin(dst, id []byte) []byte {
	if e.started {
		return dst
	}
	e.started = true
	id, _ = bytes.CutPrefix(id, []byte("resp_"))
	if len(id) == 0 {
		id = []byte("0")
	}
	e.core = append(e.core[:0], id...)
	if !e.stream {
		return dst
	}
	dst = e.event(dst, "response.created")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "in_progress", nil)
	dst = e.eventEnd(dst)
	dst = e.event(dst, "response.in_progress")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "in_progress", nil)
	return e.eventEnd(dst)
}

// event starts an SSE event of type typ: its name line and the payload's
// type and sequence_number. The caller appends more members, then eventEnd.
func (e *ResponsesEncoder) event(dst []byte, typ string) []byte {
	dst = sse.AppendEventStart(dst, typ)
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","sequence_number":`...)
	dst = codec.AppendInt(dst, e.seq)
	e.seq++
	return dst
}

// eventEnd closes the payload object and the SSE event.
func (e *ResponsesEncoder) eventEnd(dst []byte) []byte {
	return sse.AppendEventEnd(append(dst, '}'))
}

// end writes the terminal event (streaming) or the response body.
func (e *ResponsesEncoder) end(dst []byte) []byte {
	dst = e.closeItem(dst)
	e.done = true
	status, typ := "completed", "response.completed"
	switch e.stop {
	case codec.StopMaxTokens, codec.StopContextWindow, codec.StopRefusal:
		status, typ = "incomplete", "response.incomplete"
	}
	if !e.stream {
		return e.appendResponse(dst, status, nil)
	}
	dst = e.event(dst, typ)
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, status, nil)
	return e.eventEnd(dst)
}

// fail closes the open item and writes response.failed.
func (e *ResponsesEncoder) fail(dst []byte, err *codec.Error) []byte {
	dst = e.closeItem(dst)
	e.done = true
	dst = e.event(dst, "response.failed")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "failed", err)
	return e.eventEnd(dst)
}
