package anthropic

import (
	"bytes"
	"errors"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// ErrBadEvent is returned by Decoder for an upstream event or body that is
// not valid JSON.
var ErrBadEvent = errors.New("anthropic: upstream sent malformed JSON")

var _ codec.Decoder = (*Decoder)(nil)

// blockKind is what an upstream content block index holds.
type blockKind uint8

const (
	blockUnknown blockKind = iota
	blockText
	blockThinking
	blockRedacted
	blockTool
	blockSkipped // server tools, search results ...: not carried
)

// Decoder turns an Anthropic Messages upstream response (SSE events or a
// non-streamed body) into codec Events. The zero value is ready; Reset
// keeps its buffers. Events it returns borrow from the event data passed in
// and from the Decoder's scratch buffer, valid until the next call.
type Decoder struct {
	started, finished, ended bool

	// counts are the usage fields as last reported, read as ReadUsage
	// reads them (capped, so their sum cannot wrap).
	counts counts

	kinds   []blockKind // by content block index
	scratch []byte      // escaped tool input from a start event or a body
	tmp     []byte
}

// Reset prepares d for a new response.
func (d *Decoder) Reset() {
	*d = Decoder{kinds: d.kinds[:0], scratch: d.scratch[:0], tmp: d.tmp[:0]}
}

// DecodeEvent appends the Events of one upstream SSE event. name may be
// nil; the JSON type field is used then. Unknown events are skipped.
func (d *Decoder) DecodeEvent(dst []codec.Event, name, data []byte) ([]codec.Event, error) {
	if d.ended {
		return dst, nil
	}
	typ := pool.B2S(name)
	if typ == "ping" {
		return dst, nil
	}
	if !gjson.Valid(pool.B2S(data)) {
		return dst, ErrBadEvent
	}
	if typ == "" {
		typ = codec.Get(data, "type").Str
	}
	d.scratch = d.scratch[:0]
	switch typ {
	case "message_start":
		return d.messageStart(dst, codec.Get(data, "message")), nil
	case "content_block_start":
		dst = d.ensureStart(dst)
		return d.blockStart(dst, int(codec.Get(data, "index").Int()), codec.Get(data, "content_block")), nil
	case "content_block_delta":
		dst = d.ensureStart(dst)
		return d.blockDelta(dst, int(codec.Get(data, "index").Int()), codec.Get(data, "delta")), nil
	case "content_block_stop":
		return d.blockStop(dst, int(codec.Get(data, "index").Int())), nil
	case "message_delta":
		dst = d.ensureStart(dst)
		return d.messageDelta(dst, data), nil
	case "message_stop":
		dst = d.ensureStart(dst)
		return d.end(dst), nil
	case "error":
		d.ended = true
		return append(dst, codec.Event{Kind: codec.EventError, Err: decodeErrorEvent(data)}), nil
	}
	return dst, nil
}

// ensureStart synthesises EventStart for a stream that skipped
// message_start, so the Event grammar holds.
func (d *Decoder) ensureStart(dst []codec.Event) []codec.Event {
	if d.started {
		return dst
	}
	d.started = true
	return append(dst, codec.Event{Kind: codec.EventStart})
}

func (d *Decoder) messageStart(dst []codec.Event, msg gjson.Result) []codec.Event {
	if d.started {
		return dst
	}
	d.started = true
	d.readUsage(msg.Get("usage"))
	return append(dst, codec.Event{Kind: codec.EventStart, ID: str(msg, "id"),
		Name: str(msg, "model"), Usage: d.usage()})
}

// readUsage takes the usage fields u carries over the ones known so far.
func (d *Decoder) readUsage(u gjson.Result) { d.counts.read(codec.Raw(u)) }

// usage returns the neutral usage (docs/TRANSLATION.md, usage): Input counts the
// cached and cache-written tokens too.
func (d *Decoder) usage() codec.Usage { return d.counts.usage() }

func (d *Decoder) setKind(i int, k blockKind) {
	if i < 0 || i > 1<<16 {
		return
	}
	for len(d.kinds) <= i {
		d.kinds = append(d.kinds, blockUnknown)
	}
	d.kinds[i] = k
}

func (d *Decoder) kind(i int) blockKind {
	if i < 0 || i >= len(d.kinds) {
		return blockUnknown
	}
	return d.kinds[i]
}

// blockStart reads content_block_start. Text and thinking blocks produce
// events only when they carry content; the encoder opens its own block on
// the first delta.
func (d *Decoder) blockStart(dst []codec.Event, i int, cb gjson.Result) []codec.Event {
	switch cb.Get("type").Str {
	case "text":
		d.setKind(i, blockText)
		return appendText(dst, codec.EventText, i, str(cb, "text"))
	case "thinking":
		d.setKind(i, blockThinking)
		dst = appendText(dst, codec.EventThinking, i, str(cb, "thinking"))
		return appendText(dst, codec.EventSignature, i, str(cb, "signature"))
	case "redacted_thinking":
		d.setKind(i, blockRedacted)
		return append(dst, codec.Event{Kind: codec.EventRedacted, Block: i, Text: str(cb, "data")})
	case "tool_use":
		d.setKind(i, blockTool)
		dst = append(dst, codec.Event{Kind: codec.EventToolCall, Block: i, ID: str(cb, "id"),
			Name: str(cb, "name")})
		return d.appendInput(dst, i, cb.Get("input"))
	}
	d.setKind(i, blockSkipped)
	return dst
}

// appendInput emits a complete input object (a start event that already
// carries it, or a non-streamed tool_use) as one EventToolArgs.
func (d *Decoder) appendInput(dst []codec.Event, i int, input gjson.Result) []codec.Event {
	if !input.IsObject() {
		return dst
	}
	d.tmp = codec.Compact(d.tmp[:0], codec.Raw(input))
	if string(d.tmp) == "{}" {
		return dst
	}
	start := len(d.scratch)
	d.scratch = codec.AppendEscaped(d.scratch, d.tmp)
	return append(dst, codec.Event{Kind: codec.EventToolArgs, Block: i, Text: d.scratch[start:]})
}

func appendText(dst []codec.Event, k codec.EventKind, i int, text []byte) []codec.Event {
	if len(text) == 0 {
		return dst
	}
	return append(dst, codec.Event{Kind: k, Block: i, Text: text})
}

func (d *Decoder) blockDelta(dst []codec.Event, i int, delta gjson.Result) []codec.Event {
	if d.kind(i) == blockSkipped {
		return dst
	}
	switch delta.Get("type").Str {
	case "text_delta":
		return appendText(dst, codec.EventText, i, str(delta, "text"))
	case "thinking_delta":
		return appendText(dst, codec.EventThinking, i, str(delta, "thinking"))
	case "signature_delta":
		return appendText(dst, codec.EventSignature, i, str(delta, "signature"))
	case "input_json_delta":
		return appendText(dst, codec.EventToolArgs, i, str(delta, "partial_json"))
	}
	return dst
}

func (d *Decoder) blockStop(dst []codec.Event, i int) []codec.Event {
	if !d.started || d.kind(i) == blockSkipped {
		return dst
	}
	return append(dst, codec.Event{Kind: codec.EventBlockStop, Block: i})
}

// messageDelta reads the stop reason and the cumulative usage. A second
// message_delta only updates usage.
func (d *Decoder) messageDelta(dst []codec.Event, data []byte) []codec.Event {
	d.readUsage(codec.Get(data, "usage"))
	if d.finished {
		return append(dst, codec.Event{Kind: codec.EventUsage, Usage: d.usage()})
	}
	d.finished = true
	delta := codec.Get(data, "delta")
	return append(dst, codec.Event{Kind: codec.EventFinish, Stop: stopReason(delta.Get("stop_reason").Str),
		Text: str(delta, "stop_sequence"), Usage: d.usage()})
}

// end finishes the sequence at message_stop.
func (d *Decoder) end(dst []codec.Event) []codec.Event {
	if !d.finished {
		d.finished = true
		dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: codec.StopEndTurn, Usage: d.usage()})
	}
	d.ended = true
	return append(dst, codec.Event{Kind: codec.EventEnd, Usage: d.usage()})
}

// stopReason maps stop_reason (https://docs.anthropic.com/en/api/messages); unknown values end
// the turn.
func stopReason(s string) codec.StopReason {
	switch s {
	case "max_tokens":
		return codec.StopMaxTokens
	case "stop_sequence":
		return codec.StopSequence
	case "tool_use":
		return codec.StopToolUse
	case "refusal":
		return codec.StopRefusal
	case "pause_turn":
		return codec.StopPause
	case "model_context_window_exceeded":
		return codec.StopContextWindow
	}
	return codec.StopEndTurn
}

// promptTooLong starts Anthropic's context-length error message.
var promptTooLong = []byte("prompt is too long")

// contextLengthCode is OpenAI's code for a context-length error.
var contextLengthCode = []byte("context_length_exceeded")

// decodeErrorEvent reads an in-band error event (or an error body without
// an HTTP status) into a neutral Error.
func decodeErrorEvent(data []byte) codec.Error {
	kind := errorKind(codec.Get(data, "error.type").Str)
	msg := codec.Content(codec.Get(data, "error.message"))
	if msg == nil {
		msg = codec.NoMessage
	}
	e := codec.Error{Kind: kind, Message: msg}
	if kind == codec.ErrInvalidRequest && bytes.HasPrefix(msg, promptTooLong) {
		e.Kind, e.Code = codec.ErrContextLength, contextLengthCode
	}
	e.Status = codec.StatusForKind(e.Kind)
	if e.Kind == codec.ErrOverloaded {
		e.Status = 529
	}
	return e
}

// errorKind maps an Anthropic error.type to a kind (https://docs.anthropic.com/en/api/errors).
func errorKind(t string) codec.ErrorKind {
	switch t {
	case "invalid_request_error":
		return codec.ErrInvalidRequest
	case "authentication_error":
		return codec.ErrAuthentication
	case "permission_error", "billing_error":
		return codec.ErrPermission
	case "not_found_error":
		return codec.ErrNotFound
	case "request_too_large":
		return codec.ErrTooLarge
	case "rate_limit_error":
		return codec.ErrRateLimit
	case "timeout_error":
		return codec.ErrTimeout
	case "overloaded_error":
		return codec.ErrOverloaded
	}
	return codec.ErrAPI
}
