package openai

import (
	"errors"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// errResponsesEvent reports an upstream Responses event that is not JSON.
var errResponsesEvent = errors.New("openai: malformed Responses stream event")

// ResponsesDecoder turns an upstream Responses API response
// (https://platform.openai.com/docs/api-reference/responses, https://platform.openai.com/docs/api-reference/responses-streaming) into codec.Events. It is driven by output_item.added, the
// deltas and output_item.done; usage and the stop reason come from the
// terminal event (response.completed / response.incomplete), and
// response.failed or an `error` event become EventError. Items other than
// message, function_call, custom_tool_call and reasoning (hosted tool
// calls) are skipped. The zero value is ready; Reset reuses it.
//
// Events hold views into the data or body passed in, valid until the next
// call.
type ResponsesDecoder struct {
	started bool
	done    bool
	sawCall bool // a tool call was seen: the stop reason is tool use

	open     responsesItemKind // kind of the item between added and done
	openIdx  int               // its output_index
	deltas   bool              // it received deltas (done need not repeat them)
	summary  int64             // last reasoning summary_index seen
	thinking bool              // it produced thinking text
}

var _ codec.Decoder = (*ResponsesDecoder)(nil)

// respSummarySepBytes is respSummarySep as an event's Text.
var respSummarySepBytes = []byte(respSummarySep)

// responsesItemKind is the kind of an output item the codecs handle.
type responsesItemKind uint8

const (
	respItemNone responsesItemKind = iota
	respItemMessage
	respItemFunction
	respItemCustom
	respItemReasoning
)

func responsesItemKindOf(typ string) responsesItemKind {
	switch typ {
	case `"message"`:
		return respItemMessage
	case `"function_call"`:
		return respItemFunction
	case `"custom_tool_call"`:
		return respItemCustom
	case `"reasoning"`:
		return respItemReasoning
	}
	return respItemNone
}

// Reset prepares d for a new response.
func (d *ResponsesDecoder) Reset() { *d = ResponsesDecoder{} }

// DecodeEvent appends the Events of one upstream SSE event. The event name
// is not needed: every Responses payload carries its type.
func (d *ResponsesDecoder) DecodeEvent(dst []codec.Event, _, data []byte) ([]codec.Event, error) {
	if d.done || len(data) == 0 || string(data) == "[DONE]" {
		return dst, nil
	}
	s := pool.B2S(data)
	if !gjson.Valid(s) {
		return dst, errResponsesEvent
	}
	ev := gjson.Parse(s)
	typ := ev.Get("type").Raw
	if typ == `"error"` {
		return d.fail(dst, ev), nil
	}
	dst = d.start(dst, ev.Get("response"))
	switch typ {
	case `"response.output_item.added"`:
		dst = d.added(dst, int(ev.Get("output_index").Int()), ev.Get("item"))
	case `"response.output_item.done"`:
		dst = d.itemDone(dst, int(ev.Get("output_index").Int()), ev.Get("item"))
	case `"response.output_text.delta"`, `"response.refusal.delta"`:
		dst = d.delta(dst, codec.EventText, ev, data)
	case `"response.function_call_arguments.delta"`, `"response.custom_tool_call_input.delta"`:
		dst = d.delta(dst, codec.EventToolArgs, ev, data)
	case `"response.reasoning_summary_text.delta"`:
		dst = d.summaryDelta(dst, ev, data)
	case `"response.reasoning_text.delta"`:
		dst = d.delta(dst, codec.EventThinking, ev, data)
	case `"response.completed"`, `"response.incomplete"`:
		dst = d.finish(dst, ev.Get("response"))
	case `"response.failed"`:
		dst = d.fail(dst, ev.Get("response"))
	}
	return dst, nil
}

// start emits EventStart once, with the response's id and model when the
// first event carries them.
func (d *ResponsesDecoder) start(dst []codec.Event, resp gjson.Result) []codec.Event {
	if d.started {
		return dst
	}
	d.started = true
	return append(dst, codec.Event{
		Kind: codec.EventStart,
		ID:   codec.Content(resp.Get("id")),
		Name: codec.Content(resp.Get("model")),
	})
}

// added opens an item; tool calls announce themselves at once.
func (d *ResponsesDecoder) added(dst []codec.Event, idx int, item gjson.Result) []codec.Event {
	d.open, d.openIdx, d.deltas, d.summary, d.thinking = responsesItemKindOf(item.Get("type").Raw), idx, false, 0, false
	if d.open == respItemFunction || d.open == respItemCustom {
		dst = d.toolCall(dst, idx, item)
	}
	return dst
}

func (d *ResponsesDecoder) toolCall(dst []codec.Event, idx int, item gjson.Result) []codec.Event {
	d.sawCall = true
	return append(dst, codec.Event{
		Kind:   codec.EventToolCall,
		Block:  idx,
		ID:     respCallID(item),
		Name:   codec.Content(item.Get("name")),
		Custom: d.open == respItemCustom,
	})
}

// delta emits a text, thinking or arguments fragment of the open item.
// The delta is read with respMember: gjson would unescape it (allocate).
func (d *ResponsesDecoder) delta(dst []codec.Event, kind codec.EventKind, ev gjson.Result, data []byte) []codec.Event {
	text := codec.StrContent(codec.Member(data, "delta"))
	if len(text) == 0 {
		return dst
	}
	d.deltas = true
	if kind == codec.EventThinking {
		d.thinking = true
	}
	return append(dst, codec.Event{Kind: kind, Block: int(ev.Get("output_index").Int()), Text: text})
}

// summaryDelta separates summary parts with a blank line, as
// DecodeResponsesRequest joins them.
func (d *ResponsesDecoder) summaryDelta(dst []codec.Event, ev gjson.Result, data []byte) []codec.Event {
	if si := ev.Get("summary_index").Int(); si != d.summary {
		d.summary = si
		if d.thinking {
			dst = append(dst, codec.Event{Kind: codec.EventThinking, Block: int(ev.Get("output_index").Int()), Text: respSummarySepBytes})
		}
	}
	return d.delta(dst, codec.EventThinking, ev, data)
}

// itemDone closes an item, emitting whatever its deltas did not carry (an
// upstream that sends whole items only) and the reasoning signature.
func (d *ResponsesDecoder) itemDone(dst []codec.Event, idx int, item gjson.Result) []codec.Event {
	kind := responsesItemKindOf(item.Get("type").Raw)
	if kind == respItemNone {
		d.open = respItemNone
		return dst
	}
	if d.open != kind || d.openIdx != idx {
		d.open, d.openIdx, d.deltas, d.thinking = kind, idx, false, false
		if kind == respItemFunction || kind == respItemCustom {
			dst = d.toolCall(dst, idx, item)
		}
	}
	if !d.deltas {
		dst = respAppendItemContent(dst, idx, kind, item)
	}
	if kind == respItemReasoning {
		if sig := codec.Content(item.Get("encrypted_content")); len(sig) > 0 {
			dst = append(dst, codec.Event{Kind: codec.EventSignature, Block: idx, Text: sig})
		}
	}
	d.open = respItemNone
	return append(dst, codec.Event{Kind: codec.EventBlockStop, Block: idx})
}

// respAppendItemContent emits the content of a whole item: message texts,
// call arguments or custom input, reasoning texts.
func respAppendItemContent(dst []codec.Event, idx int, kind responsesItemKind, item gjson.Result) []codec.Event {
	switch kind {
	case respItemFunction:
		return respAppendNonEmpty(dst, codec.EventToolArgs, idx, codec.Content(item.Get("arguments")))
	case respItemCustom:
		return respAppendNonEmpty(dst, codec.EventToolArgs, idx, codec.Content(item.Get("input")))
	case respItemMessage:
		item.Get("content").ForEach(func(_, part gjson.Result) bool {
			text := part.Get("text")
			if !text.Exists() {
				text = part.Get("refusal")
			}
			dst = respAppendNonEmpty(dst, codec.EventText, idx, codec.Content(text))
			return true
		})
	case respItemReasoning:
		list := item.Get("summary")
		if !respHasText(list) {
			list = item.Get("content")
		}
		first := true
		list.ForEach(func(_, part gjson.Result) bool {
			text := codec.Content(part.Get("text"))
			if len(text) == 0 {
				return true
			}
			if !first {
				dst = append(dst, codec.Event{Kind: codec.EventThinking, Block: idx, Text: respSummarySepBytes})
			}
			first = false
			dst = append(dst, codec.Event{Kind: codec.EventThinking, Block: idx, Text: text})
			return true
		})
	}
	return dst
}

func respHasText(list gjson.Result) bool {
	found := false
	list.ForEach(func(_, part gjson.Result) bool {
		found = len(codec.Content(part.Get("text"))) > 0
		return !found
	})
	return found
}

func respAppendNonEmpty(dst []codec.Event, kind codec.EventKind, idx int, text []byte) []codec.Event {
	if len(text) == 0 {
		return dst
	}
	return append(dst, codec.Event{Kind: kind, Block: idx, Text: text})
}

// finish emits EventFinish with the stop reason and usage of a completed
// or incomplete response, then EventEnd.
func (d *ResponsesDecoder) finish(dst []codec.Event, resp gjson.Result) []codec.Event {
	d.done = true
	stop := codec.StopEndTurn
	if d.sawCall {
		stop = codec.StopToolUse
	}
	if resp.Get("status").Raw == `"incomplete"` {
		stop = codec.StopMaxTokens
		if resp.Get("incomplete_details.reason").Raw == `"content_filter"` {
			stop = codec.StopRefusal
		}
	}
	dst = append(dst, codec.Event{Kind: codec.EventFinish, Stop: stop, Usage: readResponsesUsage(resp.Get("usage"))})
	return append(dst, codec.Event{Kind: codec.EventEnd})
}

// readResponsesUsage maps a Responses usage object to codec.Usage.
func readResponsesUsage(u gjson.Result) codec.Usage {
	if !u.IsObject() {
		return codec.Usage{}
	}
	return responsesUsage(codec.Raw(u))
}

// responsesUsage reads the raw Responses usage object obj in one walk.
func responsesUsage(obj []byte) codec.Usage {
	if !codec.IsObject(obj) {
		return codec.Usage{}
	}
	us := codec.Usage{Known: true}
	m := codec.ObjectMembers(obj)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "input_tokens":
			us.Input = codec.IntValue(v)
		case "input_tokens_details":
			us.CacheRead = codec.IntValue(codec.Member(v, "cached_tokens"))
			us.CacheWrite = codec.IntValue(codec.Member(v, "cache_write_tokens"))
		case "output_tokens":
			us.Output = codec.IntValue(v)
		case "output_tokens_details":
			us.Reasoning = codec.IntValue(codec.Member(v, "reasoning_tokens"))
		}
	}
	return us
}

// fail emits EventError from an object holding `error` {code, message}
// (response.failed's response) or code and message itself (an `error`
// event).
func (d *ResponsesDecoder) fail(dst []codec.Event, obj gjson.Result) []codec.Event {
	d.done = true
	if e := obj.Get("error"); e.IsObject() {
		obj = e
	}
	err := codec.Error{
		Message: codec.Content(obj.Get("message")),
		Code:    codec.Content(obj.Get("code")),
	}
	err.Kind = respKindForCode(err.Code)
	err.Status = codec.StatusForKind(err.Kind)
	if err.Message == nil {
		err.Message = codec.NoMessage
	}
	return append(dst, codec.Event{Kind: codec.EventError, Err: err})
}

// respKindForCode classifies an OpenAI error code from a failed response.
func respKindForCode(code []byte) codec.ErrorKind {
	switch string(code) {
	case "context_length_exceeded":
		return codec.ErrContextLength
	case "rate_limit_exceeded", "insufficient_quota":
		return codec.ErrRateLimit
	case "invalid_prompt", "invalid_request_error", "invalid_image", "bad_request":
		return codec.ErrInvalidRequest
	case "server_is_overloaded", "slow_down":
		return codec.ErrOverloaded
	}
	return codec.ErrAPI
}

// DecodeBody appends the Events of a non-streamed Responses body:
// each output item whole, then the finish, or EventError for a failed
// response or an error body.
func (d *ResponsesDecoder) DecodeBody(dst []codec.Event, body []byte) ([]codec.Event, error) {
	s := pool.B2S(body)
	if !gjson.Valid(s) {
		return dst, errResponsesEvent
	}
	resp := gjson.Parse(s)
	if e := resp.Get("error"); e.IsObject() && (resp.Get("status").Raw == `"failed"` || !resp.Get("output").Exists()) {
		return d.fail(dst, resp), nil
	}
	dst = d.start(dst, resp)
	resp.Get("output").ForEach(func(key, item gjson.Result) bool {
		dst = d.itemDone(dst, int(key.Int()), item)
		return true
	})
	return d.finish(dst, resp), nil
}
