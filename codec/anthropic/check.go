package anthropic

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/pool"
)

// CheckStream validates a whole Anthropic Messages SSE stream as a client
// receives it (https://docs.anthropic.com/en/api/messages-streaming): every event named
// and framed, its data a JSON object whose type is the event name; exactly
// one message_start first; blocks with indices 0, 1, 2 ... in order, each
// started before its deltas, deltas of the block's kind, stopped once, one
// block at a time; a tool_use block's partial_json fragments joined form
// a JSON object (or nothing); message_delta with a stop_reason and integer
// usage.output_tokens after the last block; message_stop last. An error
// event ends the stream at any point. It returns the first violation,
// naming the event's index. It is meant for tests and is not fast.
func CheckStream(stream []byte) error {
	var c checker
	n, err := sse.Walk(stream, func(i int, ev *sse.Event) error {
		if err := c.event(ev); err != nil {
			return fmt.Errorf("event %d (%s): %w", i, clip(string(ev.Name)), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.finish(n)
}

// checker is CheckStream's state.
type checker struct {
	started, delta, ended bool
	open                  int    // index of the open block, -1 none
	openType              string // its content_block.type
	next                  int    // index the next block must have
	args                  []byte // unescaped partial_json of the open tool_use
}

func (c *checker) finish(n int) error {
	if !c.ended {
		return fmt.Errorf("event %d: stream ended without message_stop or error", n)
	}
	return nil
}

func (c *checker) event(ev *sse.Event) error {
	if c.ended {
		return fmt.Errorf("event after the end of the stream")
	}
	if !bytes.HasSuffix(ev.Raw, []byte("\n\n")) && !bytes.HasSuffix(ev.Raw, []byte("\r\n\r\n")) {
		return fmt.Errorf("event not terminated by a blank line")
	}
	if len(ev.Name) == 0 {
		return fmt.Errorf("missing event: line (SDKs drop unnamed events)")
	}
	data := pool.B2S(ev.Data)
	if !gjson.Valid(data) || !gjson.Parse(data).IsObject() {
		return fmt.Errorf("data is not a JSON object: %s", clip(data))
	}
	root := gjson.Parse(data)
	name := string(ev.Name)
	if root.Get("type").Str != name {
		return fmt.Errorf("data type %q differs from the event name", clip(root.Get("type").Str))
	}
	if name == "ping" {
		return nil
	}
	if name == "error" {
		c.ended = true
		return checkError(root)
	}
	if name != "message_start" && !c.started {
		return fmt.Errorf("before message_start")
	}
	switch name {
	case "message_start":
		return c.messageStart(root.Get("message"))
	case "content_block_start":
		return c.blockStart(root)
	case "content_block_delta":
		return c.blockDelta(root)
	case "content_block_stop":
		return c.blockStop(root)
	case "message_delta":
		return c.messageDelta(root)
	case "message_stop":
		if !c.delta {
			return fmt.Errorf("message_stop without message_delta")
		}
		c.ended = true
		return nil
	}
	return fmt.Errorf("unknown event")
}

func checkError(root gjson.Result) error {
	if root.Get("error.type").Type != gjson.String || root.Get("error.message").Type != gjson.String {
		return fmt.Errorf("error needs error.type and error.message strings")
	}
	return nil
}

func (c *checker) messageStart(m gjson.Result) error {
	if c.started {
		return fmt.Errorf("second message_start")
	}
	c.started, c.open = true, -1
	switch {
	case m.Get("id").Type != gjson.String || m.Get("model").Type != gjson.String:
		return fmt.Errorf("message needs id and model strings")
	case m.Get("type").Str != "message" || m.Get("role").Str != "assistant":
		return fmt.Errorf(`message needs type "message" and role "assistant"`)
	case !m.Get("content").IsArray() || len(m.Get("content").Array()) != 0:
		return fmt.Errorf("message content must be an empty array")
	case m.Get("stop_reason").Type != gjson.Null:
		return fmt.Errorf("message stop_reason must be null")
	}
	return checkUsage(m.Get("usage"), true)
}

func checkUsage(u gjson.Result, needInput bool) error {
	if !isInt(u.Get("output_tokens")) {
		return fmt.Errorf("usage.output_tokens must be an integer")
	}
	if needInput && !isInt(u.Get("input_tokens")) {
		return fmt.Errorf("usage.input_tokens must be an integer")
	}
	for _, k := range [...]string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
		if v := u.Get(k); v.Exists() && v.Type != gjson.Null && !isInt(v) {
			return fmt.Errorf("usage.%s must be an integer", k)
		}
	}
	return nil
}

func isInt(v gjson.Result) bool {
	return v.Type == gjson.Number && float64(v.Int()) == v.Num && v.Int() >= 0
}

func (c *checker) blockStart(root gjson.Result) error {
	idx := root.Get("index")
	switch {
	case c.delta:
		return fmt.Errorf("block after message_delta")
	case c.open >= 0:
		return fmt.Errorf("block %d started while block %d is open", idx.Int(), c.open)
	case !isInt(idx) || int(idx.Int()) != c.next:
		return fmt.Errorf("index %s, want %d", clip(idx.Raw), c.next)
	}
	cb := root.Get("content_block")
	c.open, c.openType, c.args = c.next, strings.Clone(cb.Get("type").Str), c.args[:0] // a copy: the reader reuses its buffer
	switch c.openType {
	case "text":
		return needString(cb, "text")
	case "thinking":
		return needString(cb, "thinking")
	case "redacted_thinking":
		return needString(cb, "data")
	case "tool_use", "server_tool_use":
		if err := needString(cb, "id"); err != nil {
			return err
		}
		if err := needString(cb, "name"); err != nil {
			return err
		}
		if string(codec.Compact(nil, codec.Raw(cb.Get("input")))) != "{}" {
			return fmt.Errorf("tool_use input must be {} in content_block_start (the deltas carry it)")
		}
		return nil
	}
	return fmt.Errorf("unknown content_block type %q", clip(c.openType))
}

func needString(v gjson.Result, key string) error {
	if v.Get(key).Type != gjson.String {
		return fmt.Errorf("%s must be a string", key)
	}
	return nil
}

// deltaBlock is the block type each delta type belongs to.
func deltaBlock(t string) (block, field string) {
	switch t {
	case "text_delta":
		return "text", "text"
	case "citations_delta":
		return "text", "citation"
	case "thinking_delta":
		return "thinking", "thinking"
	case "signature_delta":
		return "thinking", "signature"
	case "input_json_delta":
		return "tool_use", "partial_json"
	}
	return "", ""
}

func (c *checker) blockDelta(root gjson.Result) error {
	idx := root.Get("index").Int()
	if c.open < 0 || int(idx) != c.open {
		return fmt.Errorf("delta for block %d, which is not open", idx)
	}
	d := root.Get("delta")
	block, field := deltaBlock(d.Get("type").Str)
	if block != c.openType && !(block == "tool_use" && c.openType == "server_tool_use") {
		return fmt.Errorf("delta type %q in a %s block", clip(d.Get("type").Str), c.openType)
	}
	if field == "citation" {
		return nil
	}
	if err := needString(d, field); err != nil {
		return err
	}
	if block == "tool_use" {
		var err error
		if c.args, err = codec.AppendUnescaped(c.args, codec.Content(d.Get(field))); err != nil {
			return fmt.Errorf("partial_json: %w", err)
		}
	}
	return nil
}

func (c *checker) blockStop(root gjson.Result) error {
	idx := root.Get("index").Int()
	if c.open < 0 || int(idx) != c.open {
		return fmt.Errorf("stop for block %d, which is not open", idx)
	}
	if c.openType == "tool_use" && !isBlank(c.args) && (!isObject(c.args) || !gjson.Valid(pool.B2S(c.args))) {
		return fmt.Errorf("tool_use input is not a JSON object: %s", clip(string(c.args)))
	}
	c.open = -1
	c.next++
	return nil
}

func (c *checker) messageDelta(root gjson.Result) error {
	switch {
	case c.delta:
		return fmt.Errorf("second message_delta")
	case c.open >= 0:
		return fmt.Errorf("message_delta while block %d is open", c.open)
	}
	c.delta = true
	switch root.Get("delta.stop_reason").Str {
	case "end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded":
	default:
		return fmt.Errorf("unknown stop_reason %s", clip(root.Get("delta.stop_reason").Raw))
	}
	return checkUsage(root.Get("usage"), false)
}
