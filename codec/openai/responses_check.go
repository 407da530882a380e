package openai

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"slipstream/codec/sse"
	"slipstream/pool"
)

// CheckResponsesStream validates a whole Responses SSE stream as a client
// (Codex, the OpenAI SDKs) receives it and returns the first violation,
// naming the event index. Rules: every event has an `event:` name equal to
// its JSON type and a sequence_number counting from 0; response.created
// comes first; items are sequential (output_item.added with the next
// output_index, then only that item's events, then output_item.done with
// the same id and type and the fields Codex deserializes); parts and
// summary parts open and close in order and .done texts equal their
// deltas; no `error` event (the SDKs throw on it); the stream ends with
// exactly one response.completed, response.incomplete or response.failed
// whose response carries an id, the matching status, the full output
// (completed/incomplete) and integer usage (or null), or error {code,
// message} (failed); and the last event ends with a blank line. It is
// meant for tests and allocates freely.
func CheckResponsesStream(stream []byte) error {
	if len(bytes.TrimSpace(stream)) == 0 {
		return errors.New("empty stream")
	}
	if !bytes.HasSuffix(stream, []byte("\n\n")) && !bytes.HasSuffix(stream, []byte("\r\n\r\n")) {
		return errors.New("the last event does not end with a blank line")
	}
	var c respChecker
	_, err := sse.Walk(stream, func(i int, ev *sse.Event) error {
		if err := c.event(ev.Name, ev.Data); err != nil {
			return fmt.Errorf("event %d (%.64s): %w", i, ev.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !c.terminal {
		return errors.New("stream ends without response.completed, response.incomplete or response.failed")
	}
	return nil
}

// respChecker is CheckResponsesStream's state.
type respChecker struct {
	seq      int64
	started  bool
	terminal bool
	doneIDs  []string // ids of finished items, by output_index

	open     bool // an item is between added and done
	id, typ  string
	index    int64
	parts    int64 // content/summary parts opened in the open item
	partOpen bool
	acc      string // deltas of the open part or call
}

func (c *respChecker) event(name, data []byte) error {
	if c.terminal {
		return errors.New("event after the terminal event")
	}
	s := pool.B2S(data)
	if !gjson.Valid(s) {
		return errors.New("data is not JSON")
	}
	ev := gjson.Parse(s)
	typ := ev.Get("type").String()
	if typ == "" || string(name) != typ {
		return fmt.Errorf("event name %q does not match type %q", name, typ)
	}
	if seq := ev.Get("sequence_number"); seq.Type != gjson.Number || seq.Raw != fmt.Sprint(c.seq) {
		return fmt.Errorf("sequence_number %s, want %d", seq.Raw, c.seq)
	}
	c.seq++
	if typ == "error" {
		return errors.New("`error` event: the OpenAI SDKs throw on it and never read response.failed")
	}
	if !c.started {
		if typ != "response.created" {
			return errors.New("first event is not response.created")
		}
		c.started = true
		return respCheckResponse(ev.Get("response"), "in_progress")
	}
	return c.body(typ, ev)
}

func (c *respChecker) body(typ string, ev gjson.Result) error {
	switch typ {
	case "response.created":
		return errors.New("second response.created")
	case "response.in_progress":
		return respCheckResponse(ev.Get("response"), "in_progress")
	case "response.output_item.added":
		return c.added(ev)
	case "response.output_item.done":
		return c.itemDone(ev)
	case "response.content_part.added", "response.reasoning_summary_part.added":
		return c.partAdded(typ, ev)
	case "response.output_text.delta", "response.reasoning_summary_text.delta":
		return c.partDelta(typ, ev)
	case "response.output_text.done", "response.reasoning_summary_text.done":
		return c.partText(typ, ev, "text")
	case "response.content_part.done", "response.reasoning_summary_part.done":
		if err := c.partText(typ, ev, "part.text"); err != nil {
			return err
		}
		c.partOpen = false
		return nil
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		return c.callDelta(typ, ev)
	case "response.function_call_arguments.done":
		return c.callDone(ev, "function_call", "arguments")
	case "response.custom_tool_call_input.done":
		return c.callDone(ev, "custom_tool_call", "input")
	case "response.completed", "response.incomplete", "response.failed":
		return c.finish(typ, ev)
	}
	return nil // clients ignore event types they do not know
}

func (c *respChecker) added(ev gjson.Result) error {
	if c.open {
		return fmt.Errorf("item %q is still open: items must be sequential", c.id)
	}
	if idx := ev.Get("output_index").Int(); idx != int64(len(c.doneIDs)) {
		return fmt.Errorf("output_index %d, want %d", idx, len(c.doneIDs))
	}
	item := ev.Get("item")
	// Copies: gjson's strings view the SSE reader's buffer, which the
	// next event may overwrite.
	c.id, c.typ = strings.Clone(item.Get("id").String()), strings.Clone(item.Get("type").String())
	if c.id == "" || c.typ == "" {
		return errors.New("item without id or type")
	}
	c.open, c.index, c.parts, c.partOpen, c.acc = true, int64(len(c.doneIDs)), 0, false, ""
	return nil
}

// ofOpen checks that an event names the open item (item_id, output_index)
// and that the item has type want.
func (c *respChecker) ofOpen(ev gjson.Result, want string) error {
	if !c.open {
		return errors.New("no item is open")
	}
	if id := ev.Get("item_id").String(); id != c.id {
		return fmt.Errorf("item_id %q, want %q (the item id, not the call id)", id, c.id)
	}
	if idx := ev.Get("output_index").Int(); idx != c.index {
		return fmt.Errorf("output_index %d, want %d", idx, c.index)
	}
	if c.typ != want {
		return fmt.Errorf("event for a %s item, open item is %s", want, c.typ)
	}
	return nil
}

// respPartKind returns the part type an event is about and its index member.
func respPartKind(typ string) (itemType, indexKey string) {
	if bytes.Contains(pool.S2B(typ), []byte("reasoning_summary")) {
		return "reasoning", "summary_index"
	}
	return "message", "content_index"
}

func (c *respChecker) partAdded(typ string, ev gjson.Result) error {
	itemType, key := respPartKind(typ)
	if err := c.ofOpen(ev, itemType); err != nil {
		return err
	}
	if c.partOpen {
		return errors.New("a part is already open")
	}
	if idx := ev.Get(key).Int(); idx != c.parts {
		return fmt.Errorf("%s %d, want %d", key, idx, c.parts)
	}
	c.parts++
	c.partOpen, c.acc = true, ""
	return nil
}

func (c *respChecker) partDelta(typ string, ev gjson.Result) error {
	itemType, key := respPartKind(typ)
	if err := c.ofOpen(ev, itemType); err != nil {
		return err
	}
	if !c.partOpen || ev.Get(key).Int() != c.parts-1 {
		return fmt.Errorf("delta outside an open part (%s %s)", key, ev.Get(key).Raw)
	}
	delta := ev.Get("delta")
	if delta.Type != gjson.String {
		return errors.New("delta is not a string")
	}
	c.acc += delta.String()
	return nil
}

func (c *respChecker) partText(typ string, ev gjson.Result, path string) error {
	itemType, key := respPartKind(typ)
	if err := c.ofOpen(ev, itemType); err != nil {
		return err
	}
	if !c.partOpen || ev.Get(key).Int() != c.parts-1 {
		return fmt.Errorf("%s outside an open part", typ)
	}
	if text := ev.Get(path); text.Type != gjson.String || text.String() != c.acc {
		return fmt.Errorf("%s %.64q differs from its deltas %.64q", path, text.String(), c.acc)
	}
	return nil
}

func (c *respChecker) callDelta(typ string, ev gjson.Result) error {
	want := "function_call"
	if typ == "response.custom_tool_call_input.delta" {
		want = "custom_tool_call"
	}
	if err := c.ofOpen(ev, want); err != nil {
		return err
	}
	delta := ev.Get("delta")
	if delta.Type != gjson.String {
		return errors.New("delta is not a string")
	}
	c.acc += delta.String()
	return nil
}

func (c *respChecker) callDone(ev gjson.Result, want, key string) error {
	if err := c.ofOpen(ev, want); err != nil {
		return err
	}
	v := ev.Get(key)
	if v.Type != gjson.String {
		return fmt.Errorf("%s is not a string", key)
	}
	if c.acc != "" && v.String() != c.acc {
		return fmt.Errorf("%s %.64q differs from its deltas %.64q", key, v.String(), c.acc)
	}
	return nil
}

func (c *respChecker) itemDone(ev gjson.Result) error {
	if !c.open {
		return errors.New("output_item.done without an open item")
	}
	if c.partOpen {
		return errors.New("output_item.done while a part is open")
	}
	if idx := ev.Get("output_index").Int(); idx != c.index {
		return fmt.Errorf("output_index %d, want %d", idx, c.index)
	}
	item := ev.Get("item")
	if id, typ := item.Get("id").String(), item.Get("type").String(); id != c.id || typ != c.typ {
		return fmt.Errorf("done item %s %q, added %s %q", typ, id, c.typ, c.id)
	}
	if err := respCheckItem(item); err != nil {
		return err
	}
	c.open = false
	c.doneIDs = append(c.doneIDs, c.id)
	return nil
}

// checkItem checks the fields Codex needs to deserialize a finished item:
// items it drops silently would lose the answer.
func respCheckItem(item gjson.Result) error {
	need := func(path string, t gjson.Type) error {
		if v := item.Get(path); v.Type != t {
			return fmt.Errorf("%s item: %s missing or not a %s", item.Get("type").String(), path, t)
		}
		return nil
	}
	var errs []error
	switch item.Get("type").String() {
	case "message":
		errs = append(errs, need("role", gjson.String))
		if !item.Get("content").IsArray() {
			errs = append(errs, errors.New("message item: content is not an array"))
		}
	case "function_call":
		errs = append(errs, need("name", gjson.String), need("arguments", gjson.String), need("call_id", gjson.String))
	case "custom_tool_call":
		errs = append(errs, need("name", gjson.String), need("input", gjson.String), need("call_id", gjson.String))
	case "reasoning":
		if !item.Get("summary").IsArray() {
			errs = append(errs, errors.New("reasoning item: summary is not an array"))
		}
	}
	return errors.Join(errs...)
}

func (c *respChecker) finish(typ string, ev gjson.Result) error {
	c.terminal = true
	status := typ[len("response."):]
	resp := ev.Get("response")
	if err := respCheckResponse(resp, status); err != nil {
		return err
	}
	if status == "failed" {
		if resp.Get("error.code").Type != gjson.String || resp.Get("error.message").Type != gjson.String {
			return errors.New("response.failed without response.error {code, message} strings")
		}
	} else if c.open {
		return fmt.Errorf("item %q not closed before %s", c.id, typ)
	}
	if status == "incomplete" && resp.Get("incomplete_details.reason").Type != gjson.String {
		return errors.New("response.incomplete without incomplete_details.reason")
	}
	if status != "failed" {
		if err := c.checkOutput(resp.Get("output")); err != nil {
			return err
		}
	}
	return respCheckUsage(resp.Get("usage"))
}

// checkOutput checks that the terminal output lists every finished item.
func (c *respChecker) checkOutput(out gjson.Result) error {
	items := out.Array()
	if len(items) != len(c.doneIDs) {
		return fmt.Errorf("response.output has %d items, %d were done", len(items), len(c.doneIDs))
	}
	for i, it := range items {
		if id := it.Get("id").String(); id != c.doneIDs[i] {
			return fmt.Errorf("response.output[%d].id %q, want %q", i, id, c.doneIDs[i])
		}
		if err := respCheckItem(it); err != nil {
			return fmt.Errorf("response.output[%d]: %w", i, err)
		}
	}
	return nil
}

// respCheckResponse checks the members every response object needs.
func respCheckResponse(resp gjson.Result, status string) error {
	if !resp.IsObject() {
		return errors.New("no response object")
	}
	if resp.Get("id").Type != gjson.String || resp.Get("object").String() != "response" {
		return errors.New("response needs a string id and object \"response\"")
	}
	if got := resp.Get("status").String(); got != status {
		return fmt.Errorf("response.status %q, want %q", got, status)
	}
	if !resp.Get("output").IsArray() || resp.Get("created_at").Type != gjson.Number || resp.Get("model").Type != gjson.String {
		return errors.New("response needs output [], created_at and model")
	}
	return nil
}

// checkUsage checks usage: null, or integer counts.
func respCheckUsage(u gjson.Result) error {
	if !u.Exists() || u.Type == gjson.Null {
		return nil
	}
	for _, path := range [...]string{"input_tokens", "output_tokens", "total_tokens"} {
		if !respIsInt(u.Get(path)) {
			return fmt.Errorf("usage.%s is not an integer", path)
		}
	}
	if d := u.Get("input_tokens_details"); d.Exists() && !respIsInt(d.Get("cached_tokens")) {
		return errors.New("usage.input_tokens_details.cached_tokens is not an integer")
	}
	if d := u.Get("output_tokens_details"); d.Exists() && !respIsInt(d.Get("reasoning_tokens")) {
		return errors.New("usage.output_tokens_details.reasoning_tokens is not an integer")
	}
	return nil
}

func respIsInt(v gjson.Result) bool {
	return v.Type == gjson.Number && !bytes.ContainsAny(pool.S2B(v.Raw), ".eE")
}
