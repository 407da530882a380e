package anthropic

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

var _ codec.Encoder = (*Encoder)(nil)

// openKind is the kind of the client block the Encoder has open.
type openKind uint8

const (
	openNone openKind = iota
	openText
	openThinking
	openTool
)

// Encoder writes codec Events as an Anthropic Messages response to a
// client: SSE events (https://docs.anthropic.com/en/api/messages-streaming) when streaming, otherwise
// one message body built up across Append calls. The zero value
// needs Reset. It copies what it keeps past an Append call (message id,
// stop sequence, tool arguments of a non-streamed body), so Events may be
// reused as soon as Append returns.
type Encoder struct {
	req    *codec.Request
	stream bool

	started, done bool
	sawTool       bool

	open      openKind
	openBlock int  // upstream Block of the open block
	cur       int  // client index of the open block
	next      int  // client index of the next block
	custom    bool // the open tool block is a free-text tool
	signed    bool // the open thinking block has its signature

	stop    codec.StopReason
	stopSeq []byte
	usage   codec.Usage
	msgID   []byte
	args    []byte // non-streamed: the open tool block's argument fragments
}

// Reset prepares e for a response to req (borrowed until the response is
// done; it may be nil, then the upstream model name is used).
func (e *Encoder) Reset(req *codec.Request, stream bool) {
	*e = Encoder{req: req, stream: stream, stopSeq: e.stopSeq[:0], msgID: e.msgID[:0], args: e.args[:0]}
}

// Done reports whether the terminal output has been written.
func (e *Encoder) Done() bool { return e.done }

// Append appends the client output for ev to dst.
func (e *Encoder) Append(dst []byte, ev *codec.Event) []byte {
	if e.done {
		return dst
	}
	if ev.Kind == codec.EventError {
		return e.appendError(dst, &ev.Err)
	}
	if !e.started {
		dst = e.appendStart(dst, ev)
	}
	switch ev.Kind {
	case codec.EventText:
		dst = e.appendDelta(dst, openText, ev)
	case codec.EventThinking:
		dst = e.appendDelta(dst, openThinking, ev)
	case codec.EventSignature:
		dst = e.appendSignature(dst, ev)
	case codec.EventRedacted:
		dst = e.appendRedacted(dst, ev)
	case codec.EventToolCall:
		dst = e.appendToolCall(dst, ev)
	case codec.EventToolArgs:
		dst = e.appendArgs(dst, ev)
	case codec.EventBlockStop:
		if e.open != openNone && e.openBlock == ev.Block {
			dst = e.closeBlock(dst)
		}
	case codec.EventUsage:
		e.usage.Merge(&ev.Usage)
	case codec.EventFinish:
		dst = e.closeBlock(dst)
		e.stop = ev.Stop
		e.stopSeq = append(e.stopSeq[:0], ev.Text...)
		e.usage.Merge(&ev.Usage)
	case codec.EventEnd:
		e.usage.Merge(&ev.Usage)
		dst = e.closeBlock(dst)
		dst = e.appendEnd(dst)
	}
	return dst
}

// appendStart writes message_start (or the head of the body). It runs on
// the first event even when that is not EventStart.
func (e *Encoder) appendStart(dst []byte, ev *codec.Event) []byte {
	e.started = true
	if ev.Kind == codec.EventStart {
		e.setMsgID(ev.ID)
		e.usage.Merge(&ev.Usage)
	} else {
		e.setMsgID(nil)
	}
	if e.stream {
		dst = sse.AppendEventStart(dst, "message_start")
		dst = append(dst, `{"type":"message_start","message":`...)
	}
	dst = append(dst, `{"id":`...)
	dst = codec.AppendString(dst, e.msgID)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	model := ev.Name
	if e.req != nil && len(e.req.Model) > 0 {
		model = e.req.Model
	}
	dst = codec.AppendString(dst, model)
	if !e.stream {
		return append(dst, `,"content":[`...)
	}
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	dst = e.appendUsage(dst, e.usage.Known, true)
	dst = append(dst, "}}"...)
	return sse.AppendEventEnd(dst)
}

// setMsgID keeps the client-facing message id: the upstream id with a
// msg_ prefix (kept when it already has one), so it is deterministic.
func (e *Encoder) setMsgID(id []byte) {
	e.msgID = e.msgID[:0]
	if !bytes.HasPrefix(id, []byte("msg_")) {
		e.msgID = append(e.msgID, "msg_"...)
	}
	if len(id) == 0 {
		id = []byte("slipstream")
	}
	e.msgID = append(e.msgID, id...)
}

// appendUsage writes the usage object. input_tokens is the uncached
// input; withInput false writes output_tokens only.
func (e *Encoder) appendUsage(dst []byte, withInput, start bool) []byte {
	u := &e.usage
	dst = append(dst, '{')
	if withInput || start {
		in := u.Input - u.CacheRead - u.CacheWrite
		if !withInput || in < 0 {
			in = 0
		}
		dst = append(dst, `"input_tokens":`...)
		dst = codec.AppendInt(dst, in)
		dst = append(dst, `,"cache_creation_input_tokens":`...)
		dst = codec.AppendInt(dst, pick(withInput, u.CacheWrite))
		dst = append(dst, `,"cache_read_input_tokens":`...)
		dst = codec.AppendInt(dst, pick(withInput, u.CacheRead))
		dst = append(dst, ',')
	}
	dst = append(dst, `"output_tokens":`...)
	if start {
		return append(dst, "0}"...)
	}
	dst = codec.AppendInt(dst, u.Output)
	return append(dst, '}')
}

func pick(ok bool, n int64) int64 {
	if ok {
		return n
	}
	return 0
}

// appendEnd writes message_delta and message_stop (or the body's tail).
// A response that emitted tool calls ends with tool_use whatever the
// upstream said, and one without tool calls never does.
func (e *Encoder) appendEnd(dst []byte) []byte {
	e.done = true
	stop := e.stop
	switch {
	case e.sawTool && (stop == codec.StopUnset || stop == codec.StopEndTurn):
		stop = codec.StopToolUse
	case !e.sawTool && stop == codec.StopToolUse:
		stop = codec.StopEndTurn
	}
	withInput := e.usage.Known && e.usage.Input > 0
	if e.stream {
		dst = sse.AppendEventStart(dst, "message_delta")
		dst = append(dst, `{"type":"message_delta","delta":{`...)
	} else {
		dst = append(dst, "],"...)
		withInput = true
	}
	dst = append(dst, `"stop_reason":"`...)
	dst = append(dst, stopName(stop)...)
	dst = append(dst, `","stop_sequence":`...)
	if stop == codec.StopSequence && len(e.stopSeq) > 0 {
		dst = codec.AppendString(dst, e.stopSeq)
	} else {
		dst = append(dst, "null"...)
	}
	if e.stream {
		dst = append(dst, '}')
	}
	dst = append(dst, `,"usage":`...)
	dst = e.appendUsage(dst, withInput, false)
	dst = append(dst, '}')
	if !e.stream {
		return dst
	}
	dst = sse.AppendEventEnd(dst)
	return sse.AppendEvent(dst, "message_stop", []byte(`{"type":"message_stop"}`))
}

// stopName returns the stop_reason of a neutral stop reason.
func stopName(s codec.StopReason) string {
	switch s {
	case codec.StopMaxTokens:
		return "max_tokens"
	case codec.StopSequence:
		return "stop_sequence"
	case codec.StopToolUse:
		return "tool_use"
	case codec.StopRefusal:
		return "refusal"
	case codec.StopPause:
		return "pause_turn"
	case codec.StopContextWindow:
		return "model_context_window_exceeded"
	}
	return "end_turn"
}

// appendError writes the in-band error event, or the error body when a
// non-streamed response has not started. A non-streamed body that has
// started cannot turn into an error: nothing more is written, and the
// caller must discard the partial body and send ev.Err itself.
func (e *Encoder) appendError(dst []byte, err *codec.Error) []byte {
	e.done = true
	if !e.stream {
		if e.started {
			return dst
		}
		return AppendErrorObject(dst, err)
	}
	dst = sse.AppendEventStart(dst, "error")
	dst = AppendErrorObject(dst, err)
	return sse.AppendEventEnd(dst)
}
