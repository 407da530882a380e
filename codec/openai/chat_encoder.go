package openai

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// ChatEncoder writes codec.Events as a Chat Completions client response:
// chat.completion.chunk SSE events ending in data: [DONE] when streaming
// (https://platform.openai.com/docs/api-reference/chat-streaming), otherwise one chat.completion body.
//
// Stream shape: a role chunk (delta role "assistant", content ""), text as
// delta.content, thinking as delta.reasoning_content (the de facto field;
// signatures and redacted thinking have no Chat slot and are dropped), each
// tool call as a first fragment {index,id,type,function:{name,arguments:""}}
// then fragments of only index + function.arguments, the finish chunk, the
// usage chunk (choices: []) only when the client set include_usage, then
// [DONE]. Every chunk repeats id, object, created (req.Created) and model
// (req.Model); with include_usage every other chunk carries "usage":null.
// Tool calls are numbered 0, 1, ... in the order they start; a call whose
// arguments never arrived gets "{}". A custom tool call (Event.Custom, only
// produced for clients that declared custom tools) is written in Chat's
// native custom shape, {type:"custom",custom:{name,input}} with input
// fragments, rather than as a function call with {"input": text}.
// finish_reason is tool_calls whenever calls were written.
//
// The non-streamed body is built from the same events and written at
// EventEnd: content (null when there are only tool calls),
// reasoning_content when there was thinking, tool_calls, finish_reason and
// usage. It assumes each call's argument fragments arrive together, as
// every decoder produces them for bodies.
//
// The chunk id is "chatcmpl-" + the upstream id (kept as is when it
// already has that prefix). EventError writes the in-band error
// (data: {"error":...}, no [DONE]) when streaming, the error body
// otherwise. The zero value is ready after Reset.
type ChatEncoder struct {
	req     *codec.Request
	stream  bool
	started bool
	done    bool

	id    []byte // chunk/completion id
	model []byte // client-facing model, escaped
	usage codec.Usage
	stop  codec.StopReason

	calls []chatOutCall // by client tool index

	// Non-stream accumulators.
	text, think, tools []byte
}

// chatOutCall is one tool call written to the client.
type chatOutCall struct {
	block  int
	custom bool
	args   bool // some argument bytes were written
}

var _ codec.Encoder = (*ChatEncoder)(nil)

// Reset prepares e for a response to req (borrowed until the response is
// done; nil only to drop references).
func (e *ChatEncoder) Reset(req *codec.Request, stream bool) {
	*e = ChatEncoder{
		req: req, stream: stream,
		id: e.id[:0], model: e.model[:0], calls: e.calls[:0],
		text: e.text[:0], think: e.think[:0], tools: e.tools[:0],
	}
	if req != nil {
		e.model = append(e.model, req.Model...)
	}
}

// Done reports whether the terminal output was written.
func (e *ChatEncoder) Done() bool { return e.done }

// Append appends the client output for ev to dst.
func (e *ChatEncoder) Append(dst []byte, ev *codec.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Kind {
	case codec.EventStart:
		e.usage.Merge(&ev.Usage)
		return e.begin(dst, ev)
	case codec.EventUsage:
		e.usage.Merge(&ev.Usage)
	case codec.EventFinish:
		e.usage.Merge(&ev.Usage)
		e.stop = ev.Stop
	case codec.EventEnd:
		return e.end(dst)
	case codec.EventError:
		return e.fail(dst, &ev.Err)
	case codec.EventText, codec.EventThinking, codec.EventToolCall, codec.EventToolArgs:
		dst = e.begin(dst, ev)
		if e.stream {
			return e.appendDelta(dst, ev)
		}
		e.collect(ev)
	}
	return dst
}

// chatIDPrefix is the prefix of Chat completion ids.
const chatIDPrefix = "chatcmpl-"

var (
	chatIDPrefixBytes = []byte(chatIDPrefix)
	chatNoID          = []byte("slipstream") // id suffix when the upstream gave none
	chatEmptyArgs     = []byte("{}")
	chatEndEvent      = codec.Event{Kind: codec.EventEnd}
)

// begin records the id and model from the first event and, when
// streaming, writes the role chunk. Later calls do nothing.
func (e *ChatEncoder) begin(dst []byte, ev *codec.Event) []byte {
	if e.started {
		return dst
	}
	e.started = true
	id := []byte(nil)
	if ev.Kind == codec.EventStart {
		id = ev.ID
		if len(e.model) == 0 {
			e.model = append(e.model, ev.Name...)
		}
	}
	if !bytes.HasPrefix(id, chatIDPrefixBytes) {
		e.id = append(e.id, chatIDPrefix...)
	}
	if len(id) == 0 {
		id = chatNoID
	}
	e.id = append(e.id, id...)
	if !e.stream {
		return dst
	}
	dst = e.chunkStart(dst)
	dst = append(dst, `{"role":"assistant","content":""}`...)
	return e.chunkEnd(dst)
}

// chunkStart appends a chunk's envelope up to the delta value.
func (e *ChatEncoder) chunkStart(dst []byte) []byte {
	dst = e.envelope(sse.AppendEventStart(dst, ""), "chat.completion.chunk")
	return append(dst, `,"choices":[{"index":0,"delta":`...)
}

// envelope appends {"id":…,"object":…,"created":…,"model":….
func (e *ChatEncoder) envelope(dst []byte, object string) []byte {
	dst = append(dst, `{"id":`...)
	dst = codec.AppendString(dst, e.id)
	dst = append(dst, `,"object":"`...)
	dst = append(dst, object...)
	dst = append(dst, `","created":`...)
	var created int64
	if e.req != nil {
		created = e.req.Created
	}
	dst = codec.AppendInt(dst, created)
	dst = append(dst, `,"model":`...)
	return codec.AppendString(dst, e.model)
}

// chunkEnd closes a chunk begun with chunkStart (no finish reason).
func (e *ChatEncoder) chunkEnd(dst []byte) []byte {
	dst = append(dst, `,"logprobs":null,"finish_reason":null}]`...)
	return e.chunkClose(dst)
}

// chunkClose appends "usage":null when the client asked for usage, the
// closing brace and the event end.
func (e *ChatEncoder) chunkClose(dst []byte) []byte {
	if e.includeUsage() {
		dst = append(dst, `,"usage":null`...)
	}
	return sse.AppendEventEnd(append(dst, '}'))
}

func (e *ChatEncoder) includeUsage() bool { return e.req != nil && e.req.IncludeUsage }

// appendDelta writes the chunk for a text, thinking or tool event.
func (e *ChatEncoder) appendDelta(dst []byte, ev *codec.Event) []byte {
	switch ev.Kind {
	case codec.EventText:
		return e.textChunk(dst, `{"content":"`, ev.Text)
	case codec.EventThinking:
		return e.textChunk(dst, `{"reasoning_content":"`, ev.Text)
	case codec.EventToolCall:
		dst = e.closeCall(dst)
		return e.callChunk(dst, ev)
	}
	k := e.findCall(ev.Block)
	if k < 0 || len(ev.Text) == 0 {
		return dst
	}
	return e.argsChunk(dst, k, ev.Text)
}

// textChunk writes a chunk whose delta is head + text + `"}`.
func (e *ChatEncoder) textChunk(dst []byte, head string, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	dst = e.chunkStart(dst)
	dst = append(dst, head...)
	dst = append(dst, text...)
	dst = append(dst, `"}`...)
	return e.chunkEnd(dst)
}

// callChunk writes the first fragment of a new tool call.
func (e *ChatEncoder) callChunk(dst []byte, ev *codec.Event) []byte {
	k := len(e.calls)
	e.calls = append(e.calls, chatOutCall{block: ev.Block, custom: ev.Custom})
	dst = e.chunkStart(dst)
	dst = append(dst, `{"tool_calls":[{"index":`...)
	dst = codec.AppendInt(dst, int64(k))
	dst = append(dst, ',')
	dst = e.appendCallHead(dst, k, ev)
	if ev.Custom {
		dst = append(dst, `,"input":""}}]}`...)
	} else {
		dst = append(dst, `,"arguments":""}}]}`...)
	}
	return e.chunkEnd(dst)
}

// appendCallHead appends "id":…,"type":…,"<type>":{"name":… (the caller
// opened the object).
func (e *ChatEncoder) appendCallHead(dst []byte, k int, ev *codec.Event) []byte {
	dst = append(dst, `"id":`...)
	dst = e.appendCallID(dst, k, ev.ID)
	if ev.Custom {
		dst = append(dst, `,"type":"custom","custom":{"name":`...)
	} else {
		dst = append(dst, `,"type":"function","function":{"name":`...)
	}
	return codec.AppendString(dst, ev.Name)
}

// appendCallID appends the call id, or call_<k> when the upstream gave none.
func (e *ChatEncoder) appendCallID(dst []byte, k int, id []byte) []byte {
	if len(id) > 0 {
		return codec.AppendString(dst, id)
	}
	dst = append(dst, `"call_`...)
	dst = codec.AppendInt(dst, int64(k))
	return append(dst, '"')
}

// findCall returns the client index of the call for an upstream block: the
// latest call with that block, else the latest call, else -1.
func (e *ChatEncoder) findCall(block int) int {
	for k := len(e.calls) - 1; k >= 0; k-- {
		if e.calls[k].block == block {
			return k
		}
	}
	return len(e.calls) - 1
}

// argsChunk writes an arguments (or custom input) fragment of call k.
func (e *ChatEncoder) argsChunk(dst []byte, k int, text []byte) []byte {
	c := &e.calls[k]
	c.args = true
	dst = e.chunkStart(dst)
	dst = append(dst, `{"tool_calls":[{"index":`...)
	dst = codec.AppendInt(dst, int64(k))
	if c.custom {
		dst = append(dst, `,"custom":{"input":"`...)
	} else {
		dst = append(dst, `,"function":{"arguments":"`...)
	}
	dst = append(dst, text...)
	dst = append(dst, `"}}]}`...)
	return e.chunkEnd(dst)
}

// closeCall gives the last call "{}" as arguments if none arrived, so that
// clients can parse them (a no-argument call may have no fragments).
func (e *ChatEncoder) closeCall(dst []byte) []byte {
	k := len(e.calls) - 1
	if k < 0 || e.calls[k].args || e.calls[k].custom {
		return dst
	}
	return e.argsChunk(dst, k, chatEmptyArgs)
}

// finishReason returns the Chat finish_reason for the response.
func (e *ChatEncoder) finishReason() string {
	if len(e.calls) > 0 {
		return "tool_calls"
	}
	switch e.stop {
	case codec.StopMaxTokens, codec.StopContextWindow:
		return "length"
	case codec.StopRefusal:
		return "content_filter"
	}
	return "stop"
}

// end writes the closing part: finish chunk, usage chunk and [DONE] when
// streaming, else the whole body.
func (e *ChatEncoder) end(dst []byte) []byte {
	dst = e.begin(dst, &chatEndEvent)
	e.done = true
	if !e.stream {
		return e.appendBody(dst)
	}
	dst = e.closeCall(dst)
	dst = e.chunkStart(dst)
	dst = append(dst, `{},"logprobs":null,"finish_reason":"`...)
	dst = append(dst, e.finishReason()...)
	dst = append(dst, `"}]`...)
	dst = e.chunkClose(dst)
	if e.includeUsage() {
		dst = e.envelope(sse.AppendEventStart(dst, ""), "chat.completion.chunk")
		dst = append(dst, `,"choices":[],"usage":`...)
		dst = AppendChatUsage(dst, &e.usage)
		dst = sse.AppendEventEnd(append(dst, '}'))
	}
	return append(dst, sse.Done...)
}

// fail writes the error: in-band when streaming, the error body otherwise.
func (e *ChatEncoder) fail(dst []byte, err *codec.Error) []byte {
	e.done = true
	if !e.stream {
		return AppendErrorObject(dst, err)
	}
	dst = sse.AppendEventStart(dst, "")
	dst = AppendErrorObject(dst, err)
	return sse.AppendEventEnd(dst)
}

// AppendChatUsage appends a Chat usage object from the neutral
// usage: prompt_tokens counts every input token, cached ones included.
// cache_write_tokens is written only when known to be non-zero.
func AppendChatUsage(dst []byte, u *codec.Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = codec.AppendInt(dst, u.Input)
	dst = append(dst, `,"completion_tokens":`...)
	dst = codec.AppendInt(dst, u.Output)
	dst = append(dst, `,"total_tokens":`...)
	dst = codec.AppendInt(dst, u.Input+u.Output)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = codec.AppendInt(dst, u.CacheRead)
	if u.CacheWrite > 0 {
		dst = append(dst, `,"cache_write_tokens":`...)
		dst = codec.AppendInt(dst, u.CacheWrite)
	}
	dst = append(dst, `},"completion_tokens_details":{"reasoning_tokens":`...)
	dst = codec.AppendInt(dst, u.Reasoning)
	return append(dst, `}}`...)
}
