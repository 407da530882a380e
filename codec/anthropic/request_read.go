package anthropic

import (
	"bytes"
	"fmt"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// billingPrefix starts the per-request system block Claude Code sends; it
// changes every request and defeats prefix caching on other providers.
var billingPrefix = []byte("x-anthropic-billing-header:")

// DecodeRequest reads an Anthropic Messages client request into r, which
// the caller has Reset. body must be valid JSON and must stay unmodified
// while r is in use: every field of r is a view into it.
//
// It is only used when translating to another provider, so it drops what
// no other provider can take (api-formats.md C, F): the Claude Code billing
// line, cache_control, document blocks other than plain text, server tool
// blocks and typed (server) tools, metadata, citations.
func DecodeRequest(r *codec.Request, body []byte) error {
	if !codec.IsObject(body) {
		return fmt.Errorf("cannot read request: body is not a JSON object")
	}
	var top topFields
	top.read(body)
	r.Model = codec.StrContent(top.model)
	r.Stream = codec.IsTrue(top.stream)
	if err := readSystem(r, codec.ResultOf(top.system)); err != nil {
		return err
	}
	if err := readMessages(r, codec.ResultOf(top.messages)); err != nil {
		return err
	}
	readTools(r, codec.ResultOf(top.tools))
	readToolChoice(r, codec.ResultOf(top.toolChoice))
	readSampling(r, &top)
	oc := codec.ResultOf(top.outputConfig)
	readThinking(r, codec.ResultOf(top.thinking), oc)
	return readFormat(r, codec.Field(oc, "format"))
}

// topFields holds the raw top-level members DecodeRequest reads, found in
// one pass over the body (a gjson.Get per field would rescan it each time).
type topFields struct {
	model, stream, system, messages, tools, toolChoice []byte
	maxTokens, temperature, topP, topK, stopSequences  []byte
	thinking, outputConfig                             []byte
}

func (t *topFields) read(body []byte) {
	m := codec.ObjectMembers(body)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "model":
			t.model = v
		case "stream":
			t.stream = v
		case "system":
			t.system = v
		case "messages":
			t.messages = v
		case "tools":
			t.tools = v
		case "tool_choice":
			t.toolChoice = v
		case "max_tokens":
			t.maxTokens = v
		case "temperature":
			t.temperature = v
		case "top_p":
			t.topP = v
		case "top_k":
			t.topK = v
		case "stop_sequences":
			t.stopSequences = v
		case "thinking":
			t.thinking = v
		case "output_config":
			t.outputConfig = v
		}
	}
}

// readSystem hoists the system prompt (a string or text blocks) into
// r.System, without the Claude Code billing line.
func readSystem(r *codec.Request, sys gjson.Result) error {
	switch {
	case !sys.Exists() || sys.Type == gjson.Null:
		return nil
	case sys.Type == gjson.String:
		addSystem(r, codec.Content(sys))
		return nil
	case !sys.IsArray():
		return fmt.Errorf("system: must be a string or an array of text blocks")
	}
	e := codec.ArrayElems(codec.Raw(sys))
	for k := 0; ; k++ {
		v, ok := e.Next()
		if !ok {
			return nil
		}
		b := codec.ResultOf(v)
		if t := typeOf(b); t != "text" {
			return fmt.Errorf("system[%d]: unsupported block type %q", k, clip(t))
		}
		addSystem(r, str(b, "text"))
	}
}

func addSystem(r *codec.Request, text []byte) {
	if len(text) == 0 || bytes.HasPrefix(text, billingPrefix) {
		return
	}
	r.System = append(r.System, text)
}

// readMessages reads the turns. A system message before any other turn is
// hoisted into r.System; a later one becomes a RoleSystem message.
func readMessages(r *codec.Request, msgs gjson.Result) error {
	if !msgs.IsArray() {
		return fmt.Errorf("messages: must be an array")
	}
	e := codec.ArrayElems(codec.Raw(msgs))
	for k := 0; ; k++ {
		v, ok := e.Next()
		if !ok {
			return nil
		}
		if err := readMessage(r, k, codec.ResultOf(v)); err != nil {
			return err
		}
	}
}

func readMessage(r *codec.Request, i int, m gjson.Result) error {
	var role codec.Role
	switch typeOfKey(m, "role") {
	case "user":
		role = codec.RoleUser
	case "assistant":
		role = codec.RoleAssistant
	case "system":
		if len(r.Messages) == 0 {
			return readSystem(r, field(m, "content"))
		}
		role = codec.RoleSystem
	default:
		return fmt.Errorf("messages[%d]: unknown role %q", i, clip(typeOfKey(m, "role")))
	}
	r.AddMessage(role)
	content := field(m, "content")
	switch {
	case content.Type == gjson.String:
		r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.Content(content)})
		return nil
	case content.IsArray():
		return readBlocks(r, i, content)
	case !content.Exists() || content.Type == gjson.Null:
		return nil
	}
	return fmt.Errorf("messages[%d].content: must be a string or an array of blocks", i)
}

func readBlocks(r *codec.Request, i int, content gjson.Result) error {
	e := codec.ArrayElems(codec.Raw(content))
	for k := 0; ; k++ {
		v, ok := e.Next()
		if !ok {
			return nil
		}
		if err := readBlock(r, codec.ResultOf(v)); err != nil {
			return fmt.Errorf("messages[%d].content[%d]: %w", i, k, err)
		}
	}
}

// readBlock adds the part(s) for one content block.
func readBlock(r *codec.Request, b gjson.Result) error {
	switch t := typeOf(b); t {
	case "text":
		r.AddPart(codec.Part{Kind: codec.PartText, Text: str(b, "text")})
	case "image":
		return readImage(r, field(b, "source"))
	case "tool_use":
		r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: str(b, "id"),
			Name: str(b, "name"), Args: objectOrNil(field(b, "input"))})
	case "tool_result":
		return readToolResult(r, b)
	case "thinking":
		r.AddPart(codec.Part{Kind: codec.PartThinking, Text: str(b, "thinking"),
			Signature: str(b, "signature")})
	case "redacted_thinking":
		r.AddPart(codec.Part{Kind: codec.PartRedactedThinking, Signature: str(b, "data")})
	case "document":
		readDocument(r, field(b, "source"))
	default:
		if !droppedBlock(t) {
			return fmt.Errorf("unknown block type %q", clip(t))
		}
	}
	return nil
}

// droppedBlock reports block types that only Anthropic's own servers can
// act on (server tools, MCP, containers); they are dropped, not rejected.
func droppedBlock(t string) bool {
	switch t {
	case "server_tool_use", "mcp_tool_use", "mcp_tool_result", "container_upload", "search_result":
		return true
	}
	return len(t) > len("_tool_result") && t[len(t)-len("_tool_result"):] == "_tool_result"
}

// readDocument keeps a plain-text document as text; PDF, file and
// content-block documents have no cross-provider form and are dropped.
func readDocument(r *codec.Request, src gjson.Result) {
	if typeOf(src) == "text" {
		r.AddPart(codec.Part{Kind: codec.PartText, Text: str(src, "data")})
	}
}

func readImage(r *codec.Request, src gjson.Result) error {
	switch t := typeOf(src); t {
	case "base64":
		r.AddPart(codec.Part{Kind: codec.PartImage, MediaType: str(src, "media_type"),
			Text: str(src, "data")})
	case "url":
		url := str(src, "url")
		if mt, data, ok := codec.ParseDataURL(url); ok {
			r.AddPart(codec.Part{Kind: codec.PartImage, MediaType: mt, Text: data})
			return nil
		}
		r.AddPart(codec.Part{Kind: codec.PartImage, URL: url})
	default:
		return fmt.Errorf("image source type %q cannot be translated", clip(t))
	}
	return nil
}

// readToolResult adds the result part and its content as child parts.
func readToolResult(r *codec.Request, b gjson.Result) error {
	id := str(b, "tool_use_id")
	at := len(r.Parts)
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: id, Name: callName(r, id),
		IsError: codec.IsTrue(codec.Member(codec.Raw(b), "is_error"))})
	content := field(b, "content")
	switch {
	case content.Type == gjson.String:
		r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.Content(content)})
	case content.IsArray():
		e := codec.ArrayElems(codec.Raw(content))
		for k := 0; ; k++ {
			v, ok := e.Next()
			if !ok {
				break
			}
			if err := readResultBlock(r, codec.ResultOf(v)); err != nil {
				return fmt.Errorf("tool_result content[%d]: %w", k, err)
			}
		}
	}
	r.Parts[at].Children = len(r.Parts) - at - 1
	return nil
}

func readResultBlock(r *codec.Request, c gjson.Result) error {
	switch t := typeOf(c); t {
	case "text":
		r.AddPart(codec.Part{Kind: codec.PartText, Text: str(c, "text")})
	case "image":
		return readImage(r, field(c, "source"))
	case "document":
		readDocument(r, field(c, "source"))
	case "search_result", "tool_reference":
	default:
		return fmt.Errorf("unknown block type %q", clip(t))
	}
	return nil
}

// callName finds the name of the call a result answers, searching back
// from the newest part (the call is almost always in the previous turn).
func callName(r *codec.Request, id []byte) []byte {
	for i := len(r.Parts) - 1; i >= 0; i-- {
		if p := &r.Parts[i]; p.Kind == codec.PartToolCall && bytes.Equal(p.ID, id) {
			return p.Name
		}
	}
	return nil
}

// objectOrNil returns the raw JSON of v, or nil when it is absent or null.
func objectOrNil(v gjson.Result) []byte {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	return codec.Raw(v)
}

// readTools keeps custom tools; typed server tools (web_search_*, bash_*,
// text_editor_*, ...) have no equivalent elsewhere and are dropped.
func readTools(r *codec.Request, tools gjson.Result) {
	e := codec.ArrayElems(codec.Raw(tools))
	for v, ok := e.Next(); ok; v, ok = e.Next() {
		var tool toolFields
		tool.read(v)
		if tool.typ != nil && string(tool.typ) != "null" && string(tool.typ) != `"custom"` {
			continue
		}
		r.Tools = append(r.Tools, codec.Tool{
			Kind:        codec.ToolFunction,
			Name:        codec.StrContent(tool.name),
			Description: codec.StrContent(tool.description),
			Schema:      rawOrNil(tool.schema),
			Strict:      codec.IsTrue(tool.strict),
		})
	}
}

// toolFields holds the raw members of one tool definition, read in one
// pass (a schema can be most of a tool's bytes; a lookup per field would
// walk it once per field).
type toolFields struct{ typ, name, description, schema, strict []byte }

func (t *toolFields) read(obj []byte) {
	m := codec.ObjectMembers(obj)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type":
			t.typ = v
		case "name":
			t.name = v
		case "description":
			t.description = v
		case "input_schema":
			t.schema = v
		case "strict":
			t.strict = v
		}
	}
}

// rawOrNil returns v unless it is absent or null.
func rawOrNil(v []byte) []byte {
	if string(v) == "null" {
		return nil
	}
	return v
}

func readToolChoice(r *codec.Request, tc gjson.Result) {
	switch typeOf(tc) {
	case "auto":
		r.ToolChoice.Mode = codec.ToolChoiceAuto
	case "any":
		r.ToolChoice.Mode = codec.ToolChoiceAny
	case "none":
		r.ToolChoice.Mode = codec.ToolChoiceNone
	case "tool":
		r.ToolChoice = codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: str(tc, "name")}
	}
	if d := tc.Get("disable_parallel_tool_use"); d.Exists() {
		r.Parallel = 1
		if d.Bool() {
			r.Parallel = -1
		}
	}
}

func readSampling(r *codec.Request, t *topFields) {
	r.MaxTokens = codec.IntValue(t.maxTokens)
	r.Temperature = numberRaw(t.temperature)
	r.TopP = numberRaw(t.topP)
	r.TopK = numberRaw(t.topK)
	e := codec.ArrayElems(t.stopSequences)
	for v, ok := e.Next(); ok; v, ok = e.Next() {
		if s := codec.StrContent(v); s != nil {
			r.Stop = append(r.Stop, s)
		}
	}
}

// numberRaw returns v when it is a raw JSON number, else nil.
func numberRaw(v []byte) []byte {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return nil
	}
	return v
}

// readThinking maps thinking and output_config.effort to r.Reasoning:
// enabled -> Budget and the effort bucket of the budget (F.8); adaptive ->
// Budget -1 (dynamic) and the given effort, default high (Anthropic's
// default effort); disabled -> EffortNone. display "omitted" turns Summary
// off; it is on otherwise, as on Anthropic's servers.
func readThinking(r *codec.Request, th, oc gjson.Result) {
	effort := codec.ParseEffort(str(oc, "effort"))
	switch th.Get("type").Str {
	case "enabled":
		r.Reasoning.Budget = max(th.Get("budget_tokens").Int(), 0)
		r.Reasoning.Effort = effortForBudget(r.Reasoning.Budget)
		r.Reasoning.Summary = th.Get("display").Str != "omitted"
	case "adaptive":
		r.Reasoning.Budget = -1
		r.Reasoning.Effort = codec.EffortHigh
		r.Reasoning.Summary = th.Get("display").Str != "omitted"
	case "disabled":
		r.Reasoning.Effort = codec.EffortNone
		return
	}
	if effort != codec.EffortUnset {
		r.Reasoning.Effort = effort
	}
}

func readFormat(r *codec.Request, f gjson.Result) error {
	switch f.Get("type").Str {
	case "":
		return nil
	case "json_schema":
		r.Format = codec.Format{Kind: codec.FormatJSONSchema, Schema: objectOrNil(f.Get("schema")), Strict: true}
		return nil
	}
	return fmt.Errorf("output_config.format: unsupported type %q", clip(f.Get("type").Str))
}

// clip shortens s for quoting in an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
