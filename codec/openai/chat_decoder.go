package openai

import (
	"bytes"
	"errors"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// ErrChatChunk reports an upstream Chat chunk or body that is not valid
// JSON.
var ErrChatChunk = errors.New("malformed chat completion chunk")

// chatMaxCalls bounds the tool_calls index a decoder tracks; fragments with
// a larger index are dropped (no real upstream sends that many calls).
const chatMaxCalls = 256

// ChatDecoder turns an upstream Chat Completions response into codec.Events:
// chat.completion.chunk events (https://platform.openai.com/docs/api-reference/chat-streaming) through DecodeEvent, or
// a chat.completion body (https://platform.openai.com/docs/api-reference/chat) through DecodeBody. Only choice 0 is read
// (translated requests never ask for n > 1).
//
// Visible reasoning that OpenAI-compatible servers stream as
// delta.reasoning_content (DeepSeek, vLLM) or delta.reasoning (OpenRouter)
// becomes EventThinking. Tool calls become EventToolCall (Block = the call's
// position, 0, 1, ...) and EventToolArgs fragments; a custom tool call
// (type "custom") is flagged Custom and its input fragments are the free
// text. The stop reason is tool use whenever calls were seen. Usage
// arrives on EventFinish when the finish chunk carries it, else as
// EventUsage (the include_usage chunk). [DONE] ends the sequence, adding
// EventStart/EventFinish if the upstream never sent them. A chunk with a
// top-level error becomes EventError.
//
// The zero value is ready to use; Reset before each response. Events hold
// views into the data passed in, valid until the next call.
type ChatDecoder struct {
	started, finished, ended bool

	calls  []chatCall // by upstream tool_calls index
	ncalls int        // calls started so far

	// buf holds arguments some servers send as an object, escaped into
	// string content; sized per call so views into it stay valid.
	buf []byte
}

// chatCall is the decoder's state for one upstream tool_calls index.
type chatCall struct {
	started bool
	block   int
	id      []byte // copy of the call id, to tell a new call at a reused index
}

var _ codec.Decoder = (*ChatDecoder)(nil)

// Reset prepares d for a new response, keeping capacity.
func (d *ChatDecoder) Reset() {
	for i := range d.calls {
		d.calls[i] = chatCall{id: d.calls[i].id[:0]}
	}
	*d = ChatDecoder{calls: d.calls[:0], buf: d.buf[:0]}
}

var chatDone = []byte("[DONE]")

// DecodeEvent appends the Events of one SSE event of a Chat stream. name is
// ignored except "error". It returns ErrChatChunk for data that is neither
// [DONE] nor valid JSON.
func (d *ChatDecoder) DecodeEvent(dst []codec.Event, name, data []byte) ([]codec.Event, error) {
	data = bytes.TrimSpace(data)
	if d.ended || len(data) == 0 {
		return dst, nil
	}
	if bytes.Equal(data, chatDone) {
		return d.end(dst), nil
	}
	var top [3][]byte // error, choices, usage
	if !codec.ValidTop(data, chatBodyKeys[:], top[:]) {
		return dst, ErrChatChunk
	}
	d.buf = d.buf[:0]
	root := codec.ResultOf(data)
	if e := codec.ResultOf(top[0]); e.Exists() && e.Type != gjson.Null {
		return d.fail(dst, e), nil
	}
	if string(name) == "error" {
		return d.fail(dst, root), nil
	}
	dst = d.start(dst, root)
	usage := chatUsage(codec.ResultOf(top[2]))
	choices := codec.ArrayElems(top[1])
	if ch, ok := choices.Next(); ok && !d.finished && codec.IntValue(codec.Member(ch, "index")) == 0 {
		dst = d.delta(dst, codec.ResultOf(codec.Member(ch, "delta")), data)
		if fr := codec.StrContent(codec.Member(ch, "finish_reason")); fr != nil {
			d.finished = true
			ev := d.add(&dst, codec.EventFinish, 0)
			ev.Stop = chatStop(pool.B2S(fr), d.ncalls > 0)
			ev.Usage = usage
			return dst, nil
		}
	}
	if usage.Known {
		d.add(&dst, codec.EventUsage, 0).Usage = usage
	}
	return dst, nil
}

// add appends an Event of kind k for block b and returns it.
func (d *ChatDecoder) add(dst *[]codec.Event, k codec.EventKind, b int) *codec.Event {
	*dst = append(*dst, codec.Event{Kind: k, Block: b})
	return &(*dst)[len(*dst)-1]
}

// start appends EventStart once, from the first chunk's id and model.
func (d *ChatDecoder) start(dst []codec.Event, root gjson.Result) []codec.Event {
	if d.started {
		return dst
	}
	d.started = true
	ev := d.add(&dst, codec.EventStart, 0)
	ev.ID = codec.Content(codec.Field(root, "id"))
	ev.Name = codec.Content(codec.Field(root, "model"))
	return dst
}

// end handles [DONE]: it closes the sequence, supplying EventStart and
// EventFinish when the upstream sent none.
func (d *ChatDecoder) end(dst []codec.Event) []codec.Event {
	if !d.started {
		d.started = true
		d.add(&dst, codec.EventStart, 0)
	}
	if !d.finished {
		d.finished = true
		d.add(&dst, codec.EventFinish, 0).Stop = chatStop("stop", d.ncalls > 0)
	}
	d.ended = true
	d.add(&dst, codec.EventEnd, 0)
	return dst
}

// fail appends the EventError for an in-band error object and ends.
func (d *ChatDecoder) fail(dst []codec.Event, e gjson.Result) []codec.Event {
	d.ended = true
	d.add(&dst, codec.EventError, 0).Err = chatStreamError(e)
	return dst
}

// delta appends the Events of one choice delta (or non-streamed message).
func (d *ChatDecoder) delta(dst []codec.Event, delta gjson.Result, data []byte) []codec.Event {
	if !delta.IsObject() {
		return dst
	}
	think := codec.Field(delta, "reasoning_content")
	if think.Type != gjson.String {
		think = codec.Field(delta, "reasoning")
	}
	if t := codec.Content(think); len(t) > 0 {
		d.add(&dst, codec.EventThinking, 0).Text = t
	}
	if t := codec.Content(codec.Field(delta, "content")); len(t) > 0 {
		d.add(&dst, codec.EventText, 0).Text = t
	}
	if t := codec.Content(codec.Field(delta, "refusal")); len(t) > 0 {
		d.add(&dst, codec.EventText, 0).Text = t
	}
	calls := delta.Get("tool_calls")
	if !calls.IsArray() {
		return dst
	}
	j := -1
	calls.ForEach(func(_, tc gjson.Result) bool {
		j++
		dst = d.toolFragment(dst, tc, j, data)
		return true
	})
	return dst
}

// toolFragment appends the Events of one tool_calls element: EventToolCall
// when it starts a call (a name at a new index, or a name with a new id at
// a used index), then EventToolArgs for its arguments (or custom input)
// fragment. Fragments of an index that never got a name are dropped.
func (d *ChatDecoder) toolFragment(dst []codec.Event, tc gjson.Result, j int, data []byte) []codec.Event {
	idx := j
	if v := tc.Get("index"); v.Type == gjson.Number {
		idx = int(v.Int())
	}
	if idx < 0 || idx >= chatMaxCalls {
		return dst
	}
	for len(d.calls) <= idx {
		d.growCalls()
	}
	c := &d.calls[idx]
	custom := tc.Get("type").String() == "custom"
	fn := tc.Get("function")
	if custom || tc.Get("custom").Exists() {
		custom, fn = true, tc.Get("custom")
	}
	id, name := codec.Content(codec.Field(tc, "id")), codec.Content(codec.Field(fn, "name"))
	if len(name) > 0 && (!c.started || len(id) > 0 && !bytes.Equal(id, c.id)) {
		c.started, c.block, c.id = true, d.ncalls, append(c.id[:0], id...)
		d.ncalls++
		ev := d.add(&dst, codec.EventToolCall, c.block)
		ev.ID, ev.Name, ev.Custom = id, name, custom
	}
	if !c.started {
		return dst // a call must start with its name; nothing to attach to
	}
	args := codec.Field(fn, "arguments")
	if custom {
		args = codec.Field(fn, "input")
	}
	if t := d.argsText(args, data); len(t) > 0 {
		d.add(&dst, codec.EventToolArgs, c.block).Text = t
	}
	return dst
}

// growCalls adds one call slot, reusing the id capacity of a slot from an
// earlier response.
func (d *ChatDecoder) growCalls() {
	n := len(d.calls)
	if n == cap(d.calls) {
		d.calls = append(d.calls, chatCall{})
		return
	}
	d.calls = d.calls[:n+1]
	d.calls[n] = chatCall{id: d.calls[n].id[:0]}
}

// argsText returns arguments as escaped string content: a view for the
// usual JSON string, or an object (some servers send one) escaped into buf.
func (d *ChatDecoder) argsText(args gjson.Result, data []byte) []byte {
	if args.Type == gjson.String {
		return codec.Content(args)
	}
	if !args.IsObject() {
		return nil
	}
	if cap(d.buf)-len(d.buf) < 2*len(args.Raw) && len(d.buf) == 0 {
		d.buf = make([]byte, 0, 2*len(data)) // every view this call fits
	}
	start := len(d.buf)
	d.buf = ChatAppendQuotedCompact(d.buf, pool.S2B(args.Raw))
	return d.buf[start+1 : len(d.buf)-1]
}

// DecodeBody appends the whole Event sequence of a chat.completion body.
func (d *ChatDecoder) DecodeBody(dst []codec.Event, body []byte) ([]codec.Event, error) {
	var top [3][]byte // error, choices, usage
	if !codec.ValidTop(body, chatBodyKeys[:], top[:]) {
		return dst, ErrChatChunk
	}
	d.buf = d.buf[:0]
	if e := codec.ResultOf(top[0]); e.Exists() && e.Type != gjson.Null {
		return d.fail(dst, e), nil
	}
	dst = d.start(dst, gjson.Parse(pool.B2S(body)))
	choices := codec.ArrayElems(top[1])
	first, _ := choices.Next()
	ch := codec.ResultOf(first)
	dst = d.delta(dst, codec.Field(ch, "message"), body)
	d.finished = true
	ev := d.add(&dst, codec.EventFinish, 0)
	ev.Stop = chatStop(pool.B2S(codec.StrContent(codec.Member(first, "finish_reason"))), d.ncalls > 0)
	ev.Usage = chatUsage(codec.ResultOf(top[2]))
	d.ended = true
	d.add(&dst, codec.EventEnd, 0)
	return dst, nil
}

// chatBodyKeys are the top-level members DecodeBody reads while it checks
// the body's shape.
var chatBodyKeys = [3]string{"error", "choices", "usage"}

// chatStop maps a finish_reason to a StopReason; any finish with tool calls
// that did not hit a limit is tool use.
func chatStop(reason string, calls bool) codec.StopReason {
	switch reason {
	case "length":
		return codec.StopMaxTokens
	case "content_filter":
		return codec.StopRefusal
	case "tool_calls", "function_call":
		return codec.StopToolUse
	}
	if calls {
		return codec.StopToolUse
	}
	return codec.StopEndTurn
}

// chatUsage reads a Chat usage object into the neutral Usage;
// DeepSeek's prompt_cache_hit_tokens stands in for cached_tokens.
func chatUsage(u gjson.Result) codec.Usage {
	if !u.IsObject() {
		return codec.Usage{}
	}
	us := codec.Usage{Known: true}
	var hit int64
	m := codec.ObjectMembers(codec.Raw(u))
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "prompt_tokens":
			us.Input = codec.IntValue(v)
		case "completion_tokens":
			us.Output = codec.IntValue(v)
		case "prompt_tokens_details":
			us.CacheRead = codec.IntValue(codec.Member(v, "cached_tokens"))
			us.CacheWrite = codec.IntValue(codec.Member(v, "cache_write_tokens"))
		case "completion_tokens_details":
			us.Reasoning = codec.IntValue(codec.Member(v, "reasoning_tokens"))
		case "prompt_cache_hit_tokens":
			hit = codec.IntValue(v)
		}
	}
	if us.CacheRead == 0 {
		us.CacheRead = hit
	}
	return us
}

// chatStreamError reads an in-band error object ({"message","type","code"}
// or a bare string) into a neutral Error. A numeric code in the HTTP range
// is taken as the status; otherwise the type decides.
func chatStreamError(e gjson.Result) codec.Error {
	err := codec.Error{Status: 500, Kind: codec.ErrAPI, Message: codec.Content(e)}
	if e.IsObject() {
		err.Message = codec.Content(codec.Field(e, "message"))
		code := e.Get("code")
		err.Code = codec.Content(code)
		if code.Type == gjson.Number && code.Int() >= 400 && code.Int() < 600 {
			err.Status = int(code.Int())
			err.Kind = codec.KindForStatus(err.Status)
		}
		chatErrorType(&err, e.Get("type").String())
	}
	if len(err.Message) == 0 {
		err.Message = codec.NoMessage
	}
	return err
}

// chatErrorType refines an in-band error's kind from its type and code.
func chatErrorType(err *codec.Error, typ string) {
	switch {
	case string(err.Code) == "context_length_exceeded":
		err.Status, err.Kind = 400, codec.ErrContextLength
	case string(err.Code) == "rate_limit_exceeded" || string(err.Code) == "insufficient_quota" || typ == "rate_limit_exceeded":
		err.Status, err.Kind = 429, codec.ErrRateLimit
	case typ == "invalid_request_error" && err.Status == 500:
		err.Status, err.Kind = 400, codec.ErrInvalidRequest
	}
}
