package anthropic

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// billingPrefix starts the per-request system block Claude Code sends; it
// changes every request and defeats prefix caching on other providers.
var billingPrefix = []byte("x-anthropic-billing-header:")

// DecodeRequest reads an Anthropic Messages client request into r, which
// the caller has Reset. body must be valid JSON and must stay unmodified
// while r is in use: every field of r is a view into it.
//
// It is only used when translating to another provider, so it drops what
// no other provider can take (docs/TRANSLATION.md): the Claude Code billing
// line, cache_control, document blocks other than plain text, server tool
// blocks and typed (server) tools, metadata, citations.
func DecodeRequest(r *codec.Request, body []byte) error {
	c := codec.NewCursor(body)
	if !c.Object() {
		return fmt.Errorf("cannot read request: body is not a JSON object")
	}
	var top topFields
	for k, ok := c.Key(); ok; k, ok = c.Key() {
		switch string(k) {
		case "messages":
			if err := readMessages(r, &c); err != nil {
				return err
			}
		case "tools":
			readTools(r, &c)
		default:
			top.set(k, &c)
		}
	}
	r.Model = codec.StrContent(top.model)
	r.Stream = codec.IsTrue(top.stream)
	if err := readTopSystem(r, codec.ResultOf(top.system)); err != nil {
		return err
	}
	readToolChoice(r, codec.ResultOf(top.toolChoice))
	readSampling(r, &top)
	oc := codec.ResultOf(top.outputConfig)
	readThinking(r, codec.ResultOf(top.thinking), oc)
	return readFormat(r, codec.Field(oc, "format"))
}

// topFields holds the raw top-level members DecodeRequest reads after its
// single pass over the body; messages and tools are read in that pass.
type topFields struct {
	model, stream, system, toolChoice                 []byte
	maxTokens, temperature, topP, topK, stopSequences []byte
	thinking, outputConfig                            []byte
}

// set takes the member at the cursor if DecodeRequest reads it.
func (t *topFields) set(k []byte, c *codec.Cursor) {
	var dst *[]byte
	switch string(k) {
	case "model":
		dst = &t.model
	case "stream":
		dst = &t.stream
	case "system":
		dst = &t.system
	case "tool_choice":
		dst = &t.toolChoice
	case "max_tokens":
		dst = &t.maxTokens
	case "temperature":
		dst = &t.temperature
	case "top_p":
		dst = &t.topP
	case "top_k":
		dst = &t.topK
	case "stop_sequences":
		dst = &t.stopSequences
	case "thinking":
		dst = &t.thinking
	case "output_config":
		dst = &t.outputConfig
	default:
		c.Skip()
		return
	}
	*dst = c.Raw()
}

// readTopSystem reads the top-level system prompt. Clients send it after
// messages (Claude Code does), and a system message leading messages was
// hoisted already, so the top-level pieces are moved in front of those.
func readTopSystem(r *codec.Request, sys gjson.Result) error {
	hoisted := len(r.System)
	if err := readSystem(r, sys); err != nil {
		return err
	}
	rotate(r.System, hoisted)
	return nil
}

// rotate moves s[k:] in front of s[:k], in place.
func rotate(s [][]byte, k int) {
	slices.Reverse(s[:k])
	slices.Reverse(s[k:])
	slices.Reverse(s)
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

// readMessages reads the turns at the cursor. A system message before
// any other turn is hoisted into r.System; a later one becomes a
// RoleSystem message.
func readMessages(r *codec.Request, c *codec.Cursor) error {
	if !c.Array() {
		return fmt.Errorf("messages: must be an array")
	}
	for i := 0; c.Elem(); i++ {
		if err := readMessage(r, i, c); err != nil {
			return err
		}
	}
	return nil
}

// readMessage reads one turn. Its content is read in place when the role
// came first (as every client writes it); otherwise it is taken whole and
// read once the role is known.
func readMessage(r *codec.Request, i int, c *codec.Cursor) error {
	if !c.Object() {
		return fmt.Errorf("messages[%d]: must be an object", i)
	}
	var role []byte
	var later []byte
	started := false
	for k, ok := c.Key(); ok; k, ok = c.Key() {
		switch string(k) {
		case "role":
			role = codec.StrContent(c.Raw())
		case "content":
			if role == nil {
				later = c.Raw()
				continue
			}
			started = true
			if err := readTurn(r, i, role, c); err != nil {
				return err
			}
		default:
			c.Skip()
		}
	}
	if started {
		return nil
	}
	if later == nil {
		later = []byte("null")
	}
	lc := codec.NewCursor(later)
	return readTurn(r, i, role, &lc)
}

// readTurn starts the turn for role and reads its content at the cursor.
func readTurn(r *codec.Request, i int, role []byte, c *codec.Cursor) error {
	switch string(role) {
	case "user":
		r.AddMessage(codec.RoleUser)
	case "assistant":
		r.AddMessage(codec.RoleAssistant)
	case "system":
		if len(r.Messages) == 0 {
			return readSystem(r, codec.ResultOf(c.Raw()))
		}
		r.AddMessage(codec.RoleSystem)
	default:
		c.Skip()
		return fmt.Errorf("messages[%d]: unknown role %q", i, clip(string(role)))
	}
	switch c.Peek() {
	case '"':
		r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.StrContent(c.Raw())})
		return nil
	case 'n':
		c.Skip()
		return nil
	case '[':
	default:
		c.Skip()
		return fmt.Errorf("messages[%d].content: must be a string or an array of blocks", i)
	}
	c.Array()
	for k := 0; c.Elem(); k++ {
		if err := readBlock(r, c); err != nil {
			return fmt.Errorf("messages[%d].content[%d]: %w", i, k, err)
		}
	}
	return nil
}

// blockFields holds the raw members of one content block, read in one
// pass.
type blockFields struct {
	typ, text, source, id, name, input, toolUseID, content, isError []byte
	thinking, signature, data                                       []byte
}

func (b *blockFields) read(c *codec.Cursor) {
	for k, ok := c.Key(); ok; k, ok = c.Key() {
		var dst *[]byte
		switch string(k) {
		case "type":
			dst = &b.typ
		case "text":
			dst = &b.text
		case "source":
			dst = &b.source
		case "id":
			dst = &b.id
		case "name":
			dst = &b.name
		case "input":
			dst = &b.input
		case "tool_use_id":
			dst = &b.toolUseID
		case "content":
			dst = &b.content
		case "is_error":
			dst = &b.isError
		case "thinking":
			dst = &b.thinking
		case "signature":
			dst = &b.signature
		case "data":
			dst = &b.data
		default:
			c.Skip()
			continue
		}
		*dst = c.Raw()
	}
}

// readBlock adds the part(s) for the content block at the cursor.
func readBlock(r *codec.Request, c *codec.Cursor) error {
	var b blockFields
	if !c.Object() {
		return fmt.Errorf("a content block must be an object")
	}
	b.read(c)
	str := codec.StrContent
	switch t := pool.B2S(str(b.typ)); t {
	case "text":
		r.AddPart(codec.Part{Kind: codec.PartText, Text: str(b.text)})
	case "image":
		return readImage(r, codec.ResultOf(b.source))
	case "tool_use":
		r.AddPart(codec.Part{Kind: codec.PartToolCall, ID: str(b.id), Name: str(b.name), Args: rawOrNil(b.input)})
	case "tool_result":
		return readToolResult(r, &b)
	case "thinking":
		r.AddPart(codec.Part{Kind: codec.PartThinking, Text: str(b.thinking), Signature: str(b.signature)})
	case "redacted_thinking":
		r.AddPart(codec.Part{Kind: codec.PartRedactedThinking, Signature: str(b.data)})
	case "document":
		readDocument(r, codec.ResultOf(b.source))
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
func readToolResult(r *codec.Request, b *blockFields) error {
	id := codec.StrContent(b.toolUseID)
	at := len(r.Parts)
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: id, Name: callName(r, id), IsError: codec.IsTrue(b.isError)})
	switch {
	case codec.StrContent(b.content) != nil:
		r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.StrContent(b.content)})
	case len(b.content) > 0 && b.content[0] == '[':
		e := codec.ArrayElems(b.content)
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
func readTools(r *codec.Request, c *codec.Cursor) {
	if !c.Array() {
		return
	}
	for c.Elem() {
		var tool toolFields
		if !c.Object() {
			continue
		}
		tool.read(c)
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

func (t *toolFields) read(c *codec.Cursor) {
	for k, ok := c.Key(); ok; k, ok = c.Key() {
		var dst *[]byte
		switch string(k) {
		case "type":
			dst = &t.typ
		case "name":
			dst = &t.name
		case "description":
			dst = &t.description
		case "input_schema":
			dst = &t.schema
		case "strict":
			dst = &t.strict
		default:
			c.Skip()
			continue
		}
		*dst = c.Raw()
	}
}

// rawOrNil returns v unless it is absent or null.
func rawOrNil(v []byte) []byte {
	if len(v) == 0 || string(v) == "null" {
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
// enabled -> Budget and the effort bucket of the budget (docs/TRANSLATION.md); adaptive ->
// Budget -1 (dynamic) and the given effort, default high (Anthropic's
// default effort); disabled -> EffortNone. display "omitted" turns Summary
// off; it is on otherwise, as on Anthropic's servers.
func readThinking(r *codec.Request, th, oc gjson.Result) {
	effort := codec.ParseEffort(str(oc, "effort"))
	switch th.Get("type").Str {
	case "enabled":
		r.Reasoning.Budget = max(th.Get("budget_tokens").Int(), 0)
		r.Reasoning.Effort = codec.EffortForBudget(r.Reasoning.Budget)
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
