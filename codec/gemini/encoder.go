package gemini

import (
	"slipstream/codec"
	"slipstream/codec/sse"
)

var _ codec.Encoder = (*Encoder)(nil)

// Encoder writes codec.Events as Gemini client output.
//
// Streaming (:streamGenerateContent?alt=sse): one `data:` event per text or
// thinking delta, holding a complete GenerateContentResponse with one part
// (thinking as thought:true); a tool call as one functionCall part with the
// whole args object, written when its block ends; a signature as an empty
// thought part carrying thoughtSignature; the last event has an empty text
// part, finishReason and usageMetadata. An error is a data event holding
// the error object. Every event carries modelVersion (the client-facing
// model) and responseId (the upstream id).
//
// Not streaming: one GenerateContentResponse built up across calls, one
// part per block (a thinking block's signature on its part).
type Encoder struct {
	req    *codec.Request
	stream bool
	done   bool

	wrote    bool // non-stream: the body was begun
	open     blockKind
	block    int
	partOpen bool // non-stream: a text part's string is open
	nparts   int  // non-stream: parts written

	stop  codec.StopReason
	usage codec.Usage

	id       []byte // upstream response id
	callID   []byte
	callName []byte
	args     []byte // escaped argument fragments of the open call
	custom   bool
}

// Reset prepares e for a response to req, keeping its buffers.
func (e *Encoder) Reset(req *codec.Request, stream bool) {
	*e = Encoder{req: req, stream: stream, id: e.id[:0], callID: e.callID[:0],
		callName: e.callName[:0], args: e.args[:0]}
}

// Done reports whether the terminal output was written.
func (e *Encoder) Done() bool { return e.done }

// Append appends the output for ev to dst.
func (e *Encoder) Append(dst []byte, ev *codec.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Kind {
	case codec.EventStart:
		e.id = append(e.id[:0], ev.ID...)
		e.usage.Merge(&ev.Usage)
	case codec.EventText, codec.EventThinking:
		return e.delta(dst, ev)
	case codec.EventSignature:
		return e.signature(dst, ev.Text)
	case codec.EventToolCall:
		dst = e.closeBlock(dst)
		e.open, e.block, e.custom = blockTool, ev.Block, ev.Custom
		e.callID = append(e.callID[:0], ev.ID...)
		e.callName = append(e.callName[:0], ev.Name...)
		e.args = e.args[:0]
	case codec.EventToolArgs:
		if e.open == blockTool && ev.Block == e.block {
			e.args = append(e.args, ev.Text...)
		}
	case codec.EventBlockStop:
		if ev.Block == e.block {
			return e.closeBlock(dst)
		}
	case codec.EventUsage:
		e.usage.Merge(&ev.Usage)
	case codec.EventFinish:
		e.stop = ev.Stop
		e.usage.Merge(&ev.Usage)
		return e.closeBlock(dst)
	case codec.EventEnd:
		return e.end(dst)
	case codec.EventError:
		return e.fail(dst, &ev.Err)
	}
	return dst
}

// delta writes a text or thinking delta.
func (e *Encoder) delta(dst []byte, ev *codec.Event) []byte {
	kind := blockText
	if ev.Kind == codec.EventThinking {
		kind = blockThinking
	}
	if e.stream {
		if e.open == blockTool {
			dst = e.closeBlock(dst)
		}
		e.open, e.block = kind, ev.Block
		if len(ev.Text) == 0 {
			return dst
		}
		dst = e.eventStart(dst)
		dst = appendTextPart(dst, kind, ev.Text)
		return e.eventEnd(dst)
	}
	if e.open != kind || e.block != ev.Block || !e.partOpen {
		dst = e.closeBlock(dst)
		dst = e.openTextPart(dst, kind)
		e.block = ev.Block
	}
	return append(dst, ev.Text...)
}

func appendTextPart(dst []byte, kind blockKind, text []byte) []byte {
	if kind == blockThinking {
		dst = append(dst, `{"thought":true,"text":"`...)
	} else {
		dst = append(dst, `{"text":"`...)
	}
	dst = append(dst, text...)
	return append(dst, `"}`...)
}

// signature writes a thoughtSignature: on the open thinking part when not
// streaming, else on an empty thought part.
func (e *Encoder) signature(dst, sig []byte) []byte {
	if !e.stream && e.open == blockThinking && e.partOpen {
		dst = append(dst, `","thoughtSignature":`...)
		dst = codec.AppendString(dst, sig)
		dst = append(dst, '}')
		e.partOpen, e.open = false, blockNone
		return dst
	}
	dst = e.closeBlock(dst)
	dst = e.partStart(dst)
	dst = append(dst, `{"thought":true,"text":"","thoughtSignature":`...)
	dst = codec.AppendString(dst, sig)
	dst = append(dst, '}')
	return e.partEnd(dst)
}

// closeBlock ends the open block: a non-stream text part's string, or a
// pending tool call, which is written now.
func (e *Encoder) closeBlock(dst []byte) []byte {
	switch {
	case e.open == blockTool:
		dst = e.partStart(dst)
		dst = e.appendCall(dst)
		dst = e.partEnd(dst)
	case e.partOpen:
		dst = append(dst, `"}`...)
		e.partOpen = false
	}
	e.open = blockNone
	return dst
}

// appendCall appends the functionCall part of the pending call.
func (e *Encoder) appendCall(dst []byte) []byte {
	dst = append(dst, `{"functionCall":{`...)
	if len(e.callID) > 0 {
		dst = append(dst, `"id":`...)
		dst = codec.AppendString(dst, e.callID)
		dst = append(dst, ',')
	}
	dst = append(dst, `"name":`...)
	dst = codec.AppendString(dst, e.callName)
	dst = append(dst, `,"args":`...)
	switch {
	case e.custom:
		dst = append(dst, `{"input":"`...)
		dst = append(dst, e.args...)
		dst = append(dst, `"}`...)
	case len(e.args) == 0:
		dst = append(dst, "{}"...)
	default:
		start := len(dst)
		var err error
		dst, err = codec.AppendUnescaped(dst, e.args)
		if err != nil || !isObject(dst[start:]) {
			dst = append(dst[:start], `{"_raw":"`...)
			dst = append(dst, e.args...)
			dst = append(dst, `"}`...)
		}
	}
	return append(dst, "}}"...)
}

// partStart begins one part: a whole data event when streaming, else the
// next element of the body's parts array.
func (e *Encoder) partStart(dst []byte) []byte {
	if e.stream {
		return e.eventStart(dst)
	}
	dst = e.begin(dst)
	if e.nparts > 0 {
		dst = append(dst, ',')
	}
	e.nparts++
	return dst
}

func (e *Encoder) partEnd(dst []byte) []byte {
	if e.stream {
		return e.eventEnd(dst)
	}
	return dst
}

// openTextPart opens a non-stream text or thought part, its string open.
func (e *Encoder) openTextPart(dst []byte, kind blockKind) []byte {
	dst = e.partStart(dst)
	if kind == blockThinking {
		dst = append(dst, `{"thought":true,"text":"`...)
	} else {
		dst = append(dst, `{"text":"`...)
	}
	e.open, e.partOpen = kind, true
	return dst
}

// begin writes the head of the non-stream body once.
func (e *Encoder) begin(dst []byte) []byte {
	if !e.wrote {
		e.wrote = true
		dst = append(dst, `{"candidates":[{"content":{"role":"model","parts":[`...)
	}
	return dst
}

// eventStart opens a stream event up to its parts array.
func (e *Encoder) eventStart(dst []byte) []byte {
	dst = sse.AppendEventStart(dst, "")
	return append(dst, `{"candidates":[{"content":{"role":"model","parts":[`...)
}

// eventEnd closes a stream event that carries no finish reason.
func (e *Encoder) eventEnd(dst []byte) []byte {
	dst = append(dst, `]},"index":0}],`...)
	dst = e.appendIDs(dst)
	return sse.AppendEventEnd(append(dst, '}'))
}

// appendIDs appends "modelVersion":…,"responseId":….
func (e *Encoder) appendIDs(dst []byte) []byte {
	dst = append(dst, `"modelVersion":`...)
	dst = codec.AppendString(dst, e.req.Model)
	dst = append(dst, `,"responseId":`...)
	return codec.AppendString(dst, e.id)
}

// end writes the closing part: finishReason and usage.
func (e *Encoder) end(dst []byte) []byte {
	dst = e.closeBlock(dst)
	e.done = true
	if e.stream {
		dst = e.eventStart(dst)
		dst = append(dst, `{"text":""}`...)
	} else {
		dst = e.begin(dst)
		if e.nparts == 0 {
			dst = append(dst, `{"text":""}`...)
		}
	}
	dst = append(dst, `]},"finishReason":"`...)
	dst = append(dst, finishReason(e.stop)...)
	dst = append(dst, `","index":0}],`...)
	dst = appendUsage(dst, &e.usage)
	dst = append(dst, ',')
	dst = e.appendIDs(dst)
	dst = append(dst, '}')
	if e.stream {
		dst = sse.AppendEventEnd(dst)
	}
	return dst
}

// fail writes an error: a data event holding the error object when
// streaming; the error body when nothing was written yet; else the body is
// closed with finishReason OTHER and the error object beside candidates.
func (e *Encoder) fail(dst []byte, err *codec.Error) []byte {
	e.done = true
	if e.stream {
		dst = sse.AppendEventStart(dst, "")
		dst = AppendErrorObject(dst, err)
		return sse.AppendEventEnd(dst)
	}
	if !e.wrote {
		return AppendErrorObject(dst, err)
	}
	if e.open != blockTool {
		dst = e.closeBlock(dst)
	}
	dst = append(dst, `]},"finishReason":"OTHER","index":0}],`...)
	start := len(dst)
	dst = AppendErrorObject(dst, err)
	copy(dst[start:], dst[start+1:])
	return dst[:len(dst)-1]
}

// finishReason maps a stop reason to Gemini's (docs/TRANSLATION.md, stop reasons).
func finishReason(s codec.StopReason) string {
	switch s {
	case codec.StopMaxTokens, codec.StopContextWindow:
		return "MAX_TOKENS"
	case codec.StopRefusal:
		return "SAFETY"
	}
	return "STOP"
}

// appendUsage appends "usageMetadata":{…}; candidatesTokenCount excludes
// thoughts, totalTokenCount is input + output.
func appendUsage(dst []byte, u *codec.Usage) []byte {
	dst = append(dst, `"usageMetadata":{"promptTokenCount":`...)
	dst = codec.AppendInt(dst, u.Input)
	if u.CacheRead > 0 {
		dst = append(dst, `,"cachedContentTokenCount":`...)
		dst = codec.AppendInt(dst, u.CacheRead)
	}
	dst = append(dst, `,"candidatesTokenCount":`...)
	dst = codec.AppendInt(dst, max(u.Output-u.Reasoning, 0))
	if u.Reasoning > 0 {
		dst = append(dst, `,"thoughtsTokenCount":`...)
		dst = codec.AppendInt(dst, u.Reasoning)
	}
	dst = append(dst, `,"totalTokenCount":`...)
	dst = codec.AppendInt(dst, u.Input+max(u.Output, u.Reasoning))
	return append(dst, '}')
}
