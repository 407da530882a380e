package openai

import (
	"bytes"
	"fmt"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// DecodeResponsesRequest reads a Responses API client request
// (https://platform.openai.com/docs/api-reference/responses, and what Codex CLI sends) into r, which the
// caller has Reset. body must be valid JSON; r's fields are views into body
// (or into r.Scratch) and stay valid while body does.
//
// Mapping: `instructions`, then leading system/developer messages, go to
// r.System; later ones become RoleSystem messages. `input` is a string (one
// user message) or an item list: message (type may be omitted),
// function_call and custom_tool_call (assistant PartToolCall; a custom call's
// Args is its `input` string literal, Custom and ArgsString set),
// function_call_output and custom_tool_call_output (PartToolResult in a
// user message, its output string or parts as children), reasoning
// (PartThinking: summary texts joined with "\n\n", else content texts;
// encrypted_content as Signature). Consecutive items of one role share a
// message. Other item types (local_shell_call, web_search_call, compaction,
// additional_tools, configuration_update, tool_search_*, item_reference ...)
// are skipped, as are input_file parts. Tools: function and custom map
// one to one, namespace tools are flattened (see responses_namespace.go),
// hosted tools (web_search, tool_search, file_search, mcp ...) are dropped.
func DecodeResponsesRequest(r *codec.Request, body []byte) error {
	var f responsesFields
	m := codec.ObjectMembers(body)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		f.collect(pool.B2S(k), v)
	}
	if need := responsesScratchNeed(body, &f); need > 0 {
		r.ReserveScratch(need)
	}
	rd := responsesReader{r: r}
	return rd.read(&f)
}

// responsesFields holds the top-level members DecodeResponsesRequest reads,
// collected in one pass so they can be handled in a fixed order. All stay
// raw (gjson would unescape, copy, string values) and are parsed where
// they are read: a gjson.Result is 80 bytes, and this struct lives on the
// stack of a call chain that runs deep (a WebSocket turn's goroutine,
// where nine Results took the input's reading past its 8 KiB stack).
type responsesFields struct {
	model, instructions, input, stream, tools, toolChoice   []byte
	parallel, reasoning, text, maxOutput, temperature, topP []byte
}

func (f *responsesFields) collect(key string, value []byte) {
	switch key {
	case "model":
		f.model = value
	case "instructions":
		f.instructions = value
	case "input":
		f.input = value
	case "stream":
		f.stream = value
	case "tools":
		f.tools = value
	case "tool_choice":
		f.toolChoice = value
	case "parallel_tool_calls":
		f.parallel = value
	case "reasoning":
		f.reasoning = value
	case "text":
		f.text = value
	case "max_output_tokens":
		f.maxOutput = value
	case "temperature":
		f.temperature = value
	case "top_p":
		f.topP = value
	}
}

// responsesReader carries the state of one DecodeResponsesRequest call.
type responsesReader struct {
	r     *codec.Request
	index int // input item being read, for error messages
	err   error
}

func (rd *responsesReader) read(f *responsesFields) error {
	r := rd.r
	r.Model = codec.StrContent(f.model)
	r.Stream = bytes.Equal(f.stream, []byte("true"))
	if text := codec.StrContent(f.instructions); len(text) > 0 {
		r.System = append(r.System, text)
	}
	if err := rd.input(f.input); err != nil {
		return err
	}
	rd.settings(f)
	return nil
}

// input reads the input member: a string (one user message) or an item
// list.
func (rd *responsesReader) input(raw []byte) error {
	r := rd.r
	switch input := respParse(raw); {
	case len(raw) > 0 && raw[0] == '"':
		r.AddMessage(codec.RoleUser)
		r.AddPart(codec.Part{Kind: codec.PartText, Text: codec.StrContent(raw)})
	case input.IsObject():
		return fmt.Errorf("input: must be a string or an array of items")
	case input.IsArray():
		input.ForEach(rd.item)
		return rd.err
	}
	return nil
}

// settings reads the members besides the model, instructions and input.
func (rd *responsesReader) settings(f *responsesFields) {
	r := rd.r
	respParse(f.tools).ForEach(rd.tool)
	readResponsesToolChoice(r, gjson.Parse(pool.B2S(f.toolChoice))) // "auto"/"none"/"required" or an object
	switch respParse(f.parallel).Type {
	case gjson.True:
		r.Parallel = 1
	case gjson.False:
		r.Parallel = -1
	}
	readResponsesReasoning(r, respParse(f.reasoning))
	readResponsesFormat(r, respParse(f.text).Get("format"))
	if m := respParse(f.maxOutput); m.Type == gjson.Number {
		r.MaxTokens = m.Int()
	}
	r.Temperature = respRawNumber(respParse(f.temperature))
	r.TopP = respRawNumber(respParse(f.topP))
}

// respRawNumber returns v's raw JSON when it is a number, else nil.
func respRawNumber(v gjson.Result) []byte {
	if v.Type != gjson.Number {
		return nil
	}
	return codec.Raw(v)
}

// item reads one input item; it is a gjson.ForEach callback.
func (rd *responsesReader) item(_, it gjson.Result) bool {
	defer func() { rd.index++ }()
	if !it.IsObject() {
		rd.err = fmt.Errorf("input[%d]: item must be an object", rd.index)
		return false
	}
	switch typ := it.Get("type"); typ.Raw {
	case `"message"`, "":
		rd.message(it)
	case `"function_call"`:
		rd.functionCall(it)
	case `"custom_tool_call"`:
		rd.customCall(it)
	case `"function_call_output"`, `"custom_tool_call_output"`:
		rd.callOutput(it)
	case `"reasoning"`:
		rd.reasoning(it)
	}
	return rd.err == nil
}

// ensureRole starts a message with role unless the last one has it.
func (rd *responsesReader) ensureRole(role codec.Role) {
	if last, ok := rd.r.LastRole(); !ok || last != role {
		rd.r.AddMessage(role)
	}
}

func (rd *responsesReader) message(it gjson.Result) {
	content := respVal(it, "content")
	switch role := it.Get("role"); role.Raw {
	case `"user"`:
		rd.ensureRole(codec.RoleUser)
		rd.content(content)
	case `"assistant"`:
		rd.ensureRole(codec.RoleAssistant)
		rd.content(content)
	case `"system"`, `"developer"`:
		rd.system(content)
	case "":
		if it.Get("type").Exists() {
			rd.err = fmt.Errorf("input[%d]: message without a role", rd.index)
		}
		// neither type nor role: an item this reader does not know; skip it
	default:
		rd.err = fmt.Errorf("input[%d]: unknown role %.64s", rd.index, role.Raw)
	}
}

// system hoists system/developer text into r.System while no other turn
// has been read, and makes a RoleSystem message after that.
func (rd *responsesReader) system(content []byte) {
	r := rd.r
	if len(r.Messages) > 0 {
		rd.ensureRole(codec.RoleSystem)
		rd.content(content)
		return
	}
	if text := codec.StrContent(content); text != nil {
		r.System = append(r.System, text)
		return
	}
	respParse(content).ForEach(func(_, part gjson.Result) bool {
		if text := respStr(part, "text"); len(text) > 0 {
			r.System = append(r.System, text)
		}
		return true
	})
}

// content adds a message's content (raw: a string or parts) to the last
// message and returns how many parts it added.
func (rd *responsesReader) content(content []byte) int {
	if text := codec.StrContent(content); text != nil {
		rd.r.AddPart(codec.Part{Kind: codec.PartText, Text: text})
		return 1
	}
	n := 0
	respParse(content).ForEach(func(_, part gjson.Result) bool {
		if rd.part(part) {
			n++
		}
		return true
	})
	return n
}

// part adds one content part and reports whether it was kept.
func (rd *responsesReader) part(part gjson.Result) bool {
	var key string
	switch part.Get("type").Raw {
	case `"input_text"`, `"output_text"`, `"text"`:
		key = "text"
	case `"refusal"`:
		key = "refusal"
	case `"input_image"`:
		return rd.image(part)
	default:
		return false // input_file, input_audio, unknown: dropped
	}
	rd.r.AddPart(codec.Part{Kind: codec.PartText, Text: respStr(part, key)})
	return true
}

// image adds an input_image part; false for one that cannot be carried
// (a file_id). It is apart from part, whose frame would otherwise hold
// its codec.Part values (1 KB in all) under the gjson reads that run
// deepest in a request's decoding.
func (rd *responsesReader) image(part gjson.Result) bool {
	u := respStr(part, "image_url")
	if u == nil {
		u = respStr(respParse(respVal(part, "image_url")), "url")
	}
	if len(u) == 0 {
		return false
	}
	p := codec.Part{Kind: codec.PartImage, URL: u}
	if mt, data, ok := codec.ParseDataURL(u); ok {
		p = codec.Part{Kind: codec.PartImage, MediaType: mt, Text: data}
	}
	rd.r.AddPart(p)
	return true
}

func (rd *responsesReader) functionCall(it gjson.Result) {
	rd.ensureRole(codec.RoleAssistant)
	args := respVal(it, "arguments")
	rd.r.AddPart(codec.Part{
		Kind:       codec.PartToolCall,
		ID:         respCallID(it),
		Name:       rd.toolName(it),
		Args:       args,
		ArgsString: len(args) > 0 && args[0] == '"',
	})
}

func (rd *responsesReader) customCall(it gjson.Result) {
	rd.ensureRole(codec.RoleAssistant)
	input := respVal(it, "input")
	p := codec.Part{Kind: codec.PartToolCall, ID: respCallID(it), Name: rd.toolName(it), Custom: true}
	if len(input) > 0 && input[0] == '"' {
		p.Args, p.ArgsString = input, true
	}
	rd.r.AddPart(p)
}

// respCallID returns the item's call_id, or its id when call_id is missing.
func respCallID(it gjson.Result) []byte {
	if id := respStr(it, "call_id"); id != nil {
		return id
	}
	return respStr(it, "id")
}

// toolName returns a call item's tool name, flattened when the item names
// a namespace.
func (rd *responsesReader) toolName(it gjson.Result) []byte {
	name := respStr(it, "name")
	if ns := respStr(it, "namespace"); len(ns) > 0 {
		return appendFlatName(rd.r, ns, name)
	}
	return name
}

func (rd *responsesReader) callOutput(it gjson.Result) {
	rd.ensureRole(codec.RoleUser)
	r := rd.r
	r.AddPart(codec.Part{Kind: codec.PartToolResult, ID: respCallID(it)})
	at := len(r.Parts) - 1
	raw := respVal(it, "output")
	switch out := respParse(raw); {
	case len(raw) > 0 && raw[0] == '"':
		if text := codec.StrContent(raw); len(text) > 0 {
			r.AddPart(codec.Part{Kind: codec.PartText, Text: text})
			r.Parts[at].Children = 1
		}
	case out.IsArray():
		r.Parts[at].Children = rd.content(raw)
	case out.IsObject():
		// Codex's older failure shape {content, success:false}.
		r.Parts[at].IsError = out.Get("success").Type == gjson.False
		if text := respStr(out, "content"); len(text) > 0 {
			r.AddPart(codec.Part{Kind: codec.PartText, Text: text})
			r.Parts[at].Children = 1
		}
	}
}

func (rd *responsesReader) reasoning(it gjson.Result) {
	text := rd.joinTexts(it.Get("summary"))
	if len(text) == 0 {
		text = rd.joinTexts(it.Get("content"))
	}
	sig := respStr(it, "encrypted_content")
	if len(text) == 0 && len(sig) == 0 {
		return
	}
	rd.ensureRole(codec.RoleAssistant)
	rd.r.AddPart(codec.Part{Kind: codec.PartThinking, Text: text, Signature: sig})
}

// respSummarySep is the escaped separator between joined reasoning texts.
const respSummarySep = `\n\n`

// joinTexts returns the `text` members of the parts in list joined with
// respSummarySep: a view into the body for one part, else bytes in r.Scratch
// (sized by responsesScratchNeed).
func (rd *responsesReader) joinTexts(list gjson.Result) []byte {
	var first []byte
	n := 0
	start := len(rd.r.Scratch)
	list.ForEach(func(_, part gjson.Result) bool {
		text := respStr(part, "text")
		if len(text) == 0 {
			return true
		}
		switch n {
		case 0:
			first = text
		case 1:
			rd.r.Scratch = append(rd.r.Scratch, first...)
			fallthrough
		default:
			rd.r.Scratch = append(rd.r.Scratch, respSummarySep...)
			rd.r.Scratch = append(rd.r.Scratch, text...)
		}
		n++
		return true
	})
	if n < 2 {
		return first
	}
	return rd.r.Scratch[start:len(rd.r.Scratch):len(rd.r.Scratch)]
}

// responsesScratchNeed returns how many Scratch bytes reading body will
// produce: joined reasoning texts and flattened namespace names. A cheap
// byte search skips the count for requests that have neither.
func responsesScratchNeed(body []byte, f *responsesFields) int {
	if !bytes.Contains(body, []byte(`"namespace"`)) &&
		bytes.Count(body, []byte(`"summary_text"`)) < 2 && bytes.Count(body, []byte(`"reasoning_text"`)) < 2 {
		return 0
	}
	need := 0
	respParse(f.tools).ForEach(func(_, t gjson.Result) bool {
		if t.Get("type").Raw == `"namespace"` {
			ns := respStr(t, "name")
			t.Get("tools").ForEach(func(_, inner gjson.Result) bool {
				need += nsFlatSize(ns, respStr(inner, "name"))
				return true
			})
		}
		return true
	})
	respParse(f.input).ForEach(func(_, it gjson.Result) bool {
		switch it.Get("type").Raw {
		case `"reasoning"`:
			need += joinedSize(it.Get("summary")) + joinedSize(it.Get("content"))
		case `"function_call"`, `"custom_tool_call"`:
			if ns := respStr(it, "namespace"); len(ns) > 0 {
				need += nsFlatSize(ns, respStr(it, "name"))
			}
		}
		return true
	})
	return need
}

// joinedSize is the Scratch space joinTexts needs for list (0 for fewer
// than two texts, which are borrowed).
func joinedSize(list gjson.Result) int {
	size, n := 0, 0
	list.ForEach(func(_, part gjson.Result) bool {
		if text := respStr(part, "text"); len(text) > 0 {
			size += len(text) + len(respSummarySep)
			n++
		}
		return true
	})
	if n < 2 {
		return 0
	}
	return size
}
