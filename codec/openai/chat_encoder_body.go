package openai

import (
	"slipstream/codec"
)

// collect accumulates a content event for the non-streamed body.
func (e *ChatEncoder) collect(ev *codec.Event) {
	switch ev.Kind {
	case codec.EventText:
		e.text = append(e.text, ev.Text...)
	case codec.EventThinking:
		e.think = append(e.think, ev.Text...)
	case codec.EventToolCall:
		e.closeBodyCall()
		k := len(e.calls)
		e.calls = append(e.calls, chatOutCall{block: ev.Block, custom: ev.Custom})
		e.tools = append(chatComma(e.tools), '{')
		e.tools = e.appendCallHead(e.tools, k, ev)
		if ev.Custom {
			e.tools = append(e.tools, `,"input":"`...)
		} else {
			e.tools = append(e.tools, `,"arguments":"`...)
		}
	case codec.EventToolArgs:
		if len(e.calls) == 0 {
			return
		}
		e.calls[len(e.calls)-1].args = e.calls[len(e.calls)-1].args || len(ev.Text) > 0
		e.tools = append(e.tools, ev.Text...)
	}
}

// closeBodyCall closes the last tool call's arguments string ("{}" when
// no arguments arrived) and object.
func (e *ChatEncoder) closeBodyCall() {
	k := len(e.calls) - 1
	if k < 0 {
		return
	}
	if !e.calls[k].args && !e.calls[k].custom {
		e.tools = append(e.tools, chatEmptyArgs...)
	}
	e.tools = append(e.tools, `"}}`...)
}

// appendBody appends the chat.completion body.
func (e *ChatEncoder) appendBody(dst []byte) []byte {
	e.closeBodyCall()
	dst = e.envelope(dst, "chat.completion")
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if len(e.text) == 0 && len(e.calls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = codec.AppendString(dst, e.text)
	}
	if len(e.think) > 0 {
		dst = append(dst, `,"reasoning_content":`...)
		dst = codec.AppendString(dst, e.think)
	}
	if len(e.calls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		dst = append(dst, e.tools...)
		dst = append(dst, ']')
	}
	dst = append(dst, `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"`...)
	dst = append(dst, e.finishReason()...)
	dst = append(dst, `"}],"usage":`...)
	dst = AppendChatUsage(dst, &e.usage)
	return append(dst, '}')
}
