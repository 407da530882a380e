package openai

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"slipstream/codec/sse"
)

// chatCheckChoices is how many choice indexes CheckChatStream tracks.
const chatCheckChoices = 16

// CheckChatStream validates a whole Chat Completions SSE stream as a client
// receives it (https://platform.openai.com/docs/api-reference/chat-streaming) and returns the first violation,
// naming the event's index (comments not counted).
//
// Rules: only unnamed data: events; every chunk is a chat.completion.chunk
// with the same string id, integer created and string model; per choice the
// first chunk carries delta.role "assistant" and no later one does;
// content/reasoning_content are strings or null; tool_calls fragments carry
// an integer index, a new index is the next one (0, 1, ...) and starts with
// id, type and name plus a string arguments (custom: input), later
// fragments carry only index and arguments; finish_reason appears once per
// choice, is a known value, is tool_calls exactly when there were tool
// calls, and nothing follows it for that choice; at most one usage chunk,
// with choices [] and integer token counts, after the finish; the stream
// ends with data: [DONE] after every choice finished, or with an in-band
// {"error":{...}} event and no [DONE]; nothing follows either.
func CheckChatStream(stream []byte) error {
	var c chatChecker
	n, err := sse.Walk(stream, func(i int, ev *sse.Event) error {
		if err := c.event(ev.Name, ev.Data); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.finish(n)
}

// chatChecker is CheckChatStream's state.
type chatChecker struct {
	chunks     int
	id, model  string
	created    int64
	done, fail bool
	usage      bool
	choices    [chatCheckChoices]chatCheckChoice
}

// chatCheckChoice is the state of one choice index.
type chatCheckChoice struct {
	seen, finished bool
	calls          []bool // by tool index: custom
}

func (c *chatChecker) finish(n int) error {
	switch {
	case c.fail:
		return nil
	case !c.done:
		return fmt.Errorf("event %d: stream ended without data: [DONE]", n)
	case c.chunks == 0:
		return errors.New("event 0: no chunk before [DONE]")
	}
	for i := range c.choices {
		if c.choices[i].seen && !c.choices[i].finished {
			return fmt.Errorf("event %d: choice %d has no finish_reason before [DONE]", n, i)
		}
	}
	return nil
}

// event checks one event.
func (c *chatChecker) event(name, data []byte) error {
	switch {
	case c.done:
		return errors.New("event after data: [DONE]")
	case c.fail:
		return errors.New("event after the in-band error")
	case name != nil:
		return fmt.Errorf("unexpected event name %q", name)
	case string(data) == "[DONE]":
		c.done = true
		return nil
	case !gjson.ValidBytes(data):
		return fmt.Errorf("invalid JSON: %.80q", data)
	}
	root := gjson.ParseBytes(data)
	if e := root.Get("error"); e.Exists() {
		c.fail = true
		if e.Get("message").Type != gjson.String {
			return errors.New("error event without a string error.message")
		}
		return nil
	}
	if err := c.envelope(root); err != nil {
		return err
	}
	c.chunks++
	return c.body(root)
}

// envelope checks object, id, created and model against the first chunk.
func (c *chatChecker) envelope(root gjson.Result) error {
	if s := root.Get("object").String(); s != "chat.completion.chunk" {
		return fmt.Errorf("object is %q, want chat.completion.chunk", s)
	}
	id, created, model := root.Get("id"), root.Get("created"), root.Get("model")
	if id.Type != gjson.String || id.Str == "" || model.Type != gjson.String || !chatIsInt(created) {
		return errors.New("chunk needs a string id, an integer created and a string model")
	}
	if c.chunks == 0 {
		c.id, c.model, c.created = strings.Clone(id.Str), strings.Clone(model.Str), created.Int() // copies: the reader reuses its buffer
		return nil
	}
	if id.Str != c.id || model.Str != c.model || created.Int() != c.created {
		return errors.New("id, created or model changed between chunks")
	}
	return nil
}

func chatIsInt(v gjson.Result) bool {
	return v.Type == gjson.Number && !strings.ContainsAny(v.Raw, ".eE")
}

// body checks the choices and usage of a chunk.
func (c *chatChecker) body(root gjson.Result) error {
	choices := root.Get("choices")
	if !choices.IsArray() {
		return errors.New("choices must be an array")
	}
	if u := root.Get("usage"); u.Exists() && u.Type != gjson.Null {
		if err := c.checkUsage(u, len(choices.Array())); err != nil {
			return err
		}
	}
	var err error
	choices.ForEach(func(_, ch gjson.Result) bool {
		err = c.choice(ch)
		return err == nil
	})
	return err
}

// checkUsage checks the usage chunk.
func (c *chatChecker) checkUsage(u gjson.Result, nchoices int) error {
	switch {
	case c.usage:
		return errors.New("second usage chunk")
	case nchoices != 0:
		return errors.New("usage chunk must have choices: []")
	case !c.choices[0].finished:
		return errors.New("usage chunk before finish_reason")
	}
	for _, k := range [...]string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		if !chatIsInt(u.Get(k)) {
			return fmt.Errorf("usage.%s must be an integer", k)
		}
	}
	c.usage = true
	return nil
}

// choice checks one choice of a chunk.
func (c *chatChecker) choice(ch gjson.Result) error {
	idx := ch.Get("index")
	if !chatIsInt(idx) || idx.Int() < 0 || idx.Int() >= chatCheckChoices {
		return errors.New("choice needs an integer index")
	}
	st := &c.choices[idx.Int()]
	if st.finished {
		return fmt.Errorf("choice %d: chunk after finish_reason", idx.Int())
	}
	delta := ch.Get("delta")
	if !delta.IsObject() {
		return errors.New("choice needs a delta object")
	}
	role := delta.Get("role")
	switch {
	case !st.seen && role.String() != "assistant":
		return errors.New(`first chunk of a choice needs delta.role "assistant"`)
	case st.seen && role.Exists():
		return errors.New("delta.role repeated")
	}
	st.seen = true
	for _, k := range [...]string{"content", "reasoning_content", "refusal"} {
		if v := delta.Get(k); v.Exists() && v.Type != gjson.String && v.Type != gjson.Null {
			return fmt.Errorf("delta.%s must be a string or null", k)
		}
	}
	if err := st.toolCalls(delta.Get("tool_calls")); err != nil {
		return err
	}
	return st.finish(ch.Get("finish_reason"))
}

// toolCalls checks the tool_calls fragments of a delta.
func (st *chatCheckChoice) toolCalls(tcs gjson.Result) error {
	if !tcs.Exists() || tcs.Type == gjson.Null {
		return nil
	}
	if !tcs.IsArray() {
		return errors.New("delta.tool_calls must be an array")
	}
	var err error
	tcs.ForEach(func(_, tc gjson.Result) bool {
		err = st.toolCall(tc)
		return err == nil
	})
	return err
}

// toolCall checks one tool_calls fragment.
func (st *chatCheckChoice) toolCall(tc gjson.Result) error {
	idx := tc.Get("index")
	if !chatIsInt(idx) {
		return errors.New("tool_calls fragment needs an integer index")
	}
	k := int(idx.Int())
	switch {
	case k == len(st.calls):
		return st.newCall(tc, k)
	case k < 0 || k > len(st.calls):
		return fmt.Errorf("tool call index %d skips ahead of %d", k, len(st.calls))
	}
	if tc.Get("id").Exists() || tc.Get("type").Exists() {
		return fmt.Errorf("tool call %d: later fragment repeats id or type", k)
	}
	field, arg := "function", "arguments"
	if st.calls[k] {
		field, arg = "custom", "input"
	}
	if tc.Get(field+".name").Exists() || tc.Get(field+"."+arg).Type != gjson.String {
		return fmt.Errorf("tool call %d: later fragment needs only %s.%s", k, field, arg)
	}
	return nil
}

// newCall checks the first fragment of tool call k.
func (st *chatCheckChoice) newCall(tc gjson.Result, k int) error {
	typ := tc.Get("type").String()
	field, arg := "function", "arguments"
	switch typ {
	case "function":
	case "custom":
		field, arg = "custom", "input"
	default:
		return fmt.Errorf("tool call %d: type %q, want function or custom", k, typ)
	}
	if id := tc.Get("id"); id.Type != gjson.String || id.Str == "" {
		return fmt.Errorf("tool call %d: first fragment needs an id", k)
	}
	if n := tc.Get(field + ".name"); n.Type != gjson.String || n.Str == "" {
		return fmt.Errorf("tool call %d: first fragment needs %s.name", k, field)
	}
	if tc.Get(field+"."+arg).Type != gjson.String {
		return fmt.Errorf("tool call %d: first fragment needs a string %s.%s", k, field, arg)
	}
	st.calls = append(st.calls, typ == "custom")
	return nil
}

// finish checks a choice's finish_reason.
func (st *chatCheckChoice) finish(fr gjson.Result) error {
	if !fr.Exists() || fr.Type == gjson.Null {
		return nil
	}
	switch fr.String() {
	case "stop", "length", "content_filter", "function_call":
		if len(st.calls) > 0 {
			return fmt.Errorf("finish_reason %q after tool calls, want tool_calls", fr.String())
		}
	case "tool_calls":
		if len(st.calls) == 0 {
			return errors.New("finish_reason tool_calls without tool calls")
		}
	default:
		return fmt.Errorf("unknown finish_reason %.40q", fr.Raw)
	}
	st.finished = true
	return nil
}
