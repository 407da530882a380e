package openai

import (
	"errors"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// errResponsesN rejects Chat's n > 1, which Responses cannot serve.
var errResponsesN = errors.New("n > 1 is not supported when translating to the Responses API")

// respMinOutputTokens is the smallest max_output_tokens OpenAI accepts; smaller
// caps (Claude Code's max_tokens 1 probe) are raised to it.
const respMinOutputTokens = 16

// AppendResponsesRequest appends r as an upstream Responses API request
// for model (escaped JSON string content) to dst, in one pass.
//
// Mapping (docs/TRANSLATION.md): r.System joined with "\n\n" -> instructions;
// messages -> input items in order (user text/images -> one user message
// item per run, RoleSystem -> a developer message, tool results ->
// function_call_output or custom_tool_call_output, assistant text -> an
// assistant message, thinking -> a reasoning item only when it has a
// signature, tool calls -> function_call / custom_tool_call); tools,
// tool_choice, parallel_tool_calls, reasoning (effort, or a budget mapped
// to the nearest effort; summary "auto"; include
// reasoning.encrypted_content), text.format, max_output_tokens (at least
// 16), temperature, top_p; store false. Dropped: stop sequences, top_k,
// redacted thinking, thinking without a signature. n > 1 is an error.
func AppendResponsesRequest(dst []byte, r *codec.Request, model []byte) ([]byte, error) {
	if r.N > 1 {
		return dst, errResponsesN
	}
	dst = append(dst, `{"model":`...)
	dst = codec.AppendString(dst, model)
	if len(r.System) > 0 {
		dst = append(dst, `,"instructions":`...)
		dst = codec.AppendJoined(dst, r.System, `\n\n`)
	}
	dst = append(dst, `,"input":[`...)
	w := responsesWriter{r: r, dst: dst}
	for i := range r.Messages {
		w.message(i)
	}
	dst = append(w.dst, ']')
	dst = appendResponsesTools(dst, r)
	dst = appendResponsesOptions(dst, r)
	dst = append(dst, `,"store":false`...)
	if r.Stream {
		dst = append(dst, `,"stream":true`...)
	}
	return append(dst, '}'), nil
}

// responsesWriter writes input items; open is the kind of message item
// left open for the next part ("" when none).
type responsesWriter struct {
	r     *codec.Request
	dst   []byte
	items int
	open  string // role of the message item being filled, or ""
}

// item starts a new input item, closing an open message item first.
func (w *responsesWriter) item() {
	w.closeMessage()
	if w.items > 0 {
		w.dst = append(w.dst, ',')
	}
	w.items++
}

func (w *responsesWriter) closeMessage() {
	if w.open != "" {
		w.dst = append(w.dst, `]}`...)
		w.open = ""
	}
}

// messagePart adds a content part to a message item of role, opening one
// when needed.
func (w *responsesWriter) messagePart(role string) {
	if w.open == role {
		w.dst = append(w.dst, ',')
		return
	}
	w.item()
	w.dst = append(w.dst, `{"type":"message","role":"`...)
	w.dst = append(w.dst, role...)
	w.dst = append(w.dst, `","content":[`...)
	w.open = role
}

func (w *responsesWriter) message(i int) {
	m := w.r.Messages[i]
	role := "user"
	switch m.Role {
	case codec.RoleAssistant:
		role = "assistant"
	case codec.RoleSystem:
		role = "developer"
	}
	parts := w.r.Parts
	for j := m.Start; j < m.End; j++ {
		p := &parts[j]
		switch p.Kind {
		case codec.PartText:
			w.text(role, p.Text)
		case codec.PartImage:
			w.messagePart(role)
			w.dst = respAppendInputImage(w.dst, p)
		case codec.PartToolCall:
			w.toolCall(p)
		case codec.PartToolResult:
			j += w.toolResult(p, parts[j+1:min(j+1+p.Children, m.End)])
		case codec.PartThinking:
			w.reasoning(p)
		}
	}
	w.closeMessage()
}

func (w *responsesWriter) text(role string, text []byte) {
	w.messagePart(role)
	if role == "assistant" {
		w.dst = append(w.dst, `{"type":"output_text","text":`...)
	} else {
		w.dst = append(w.dst, `{"type":"input_text","text":`...)
	}
	w.dst = codec.AppendString(w.dst, text)
	w.dst = append(w.dst, '}')
}

// respAppendInputImage appends an input_image part (image_url is a plain
// string: a data URL or the image's URL).
func respAppendInputImage(dst []byte, p *codec.Part) []byte {
	dst = append(dst, `{"type":"input_image","image_url":"`...)
	if len(p.URL) > 0 {
		dst = append(dst, p.URL...)
	} else {
		dst = codec.AppendDataURL(dst, p.MediaType, p.Text)
	}
	return append(dst, `","detail":"auto"}`...)
}

func (w *responsesWriter) toolCall(p *codec.Part) {
	w.item()
	custom := p.Custom
	if t := w.r.FindTool(p.Name); t != nil && t.Kind == codec.ToolCustom {
		custom = true
	}
	if custom {
		w.dst = append(w.dst, `{"type":"custom_tool_call","call_id":`...)
	} else {
		w.dst = append(w.dst, `{"type":"function_call","call_id":`...)
	}
	w.dst = codec.AppendString(w.dst, p.ID)
	w.dst = append(w.dst, `,"name":`...)
	w.dst = codec.AppendString(w.dst, p.Name)
	if custom {
		w.dst = append(w.dst, `,"input":`...)
		w.dst = respAppendCustomInput(w.dst, p)
	} else {
		w.dst = append(w.dst, `,"arguments":`...)
		w.dst = respAppendArgsString(w.dst, p.Args, p.ArgsString)
	}
	w.dst = append(w.dst, '}')
}

// respAppendArgsString appends tool arguments as a JSON string literal whose
// content is the arguments' JSON text; empty arguments become "{}".
func respAppendArgsString(dst, args []byte, isString bool) []byte {
	switch {
	case len(args) == 0, isString && len(args) <= 2: // absent or ""
		return append(dst, `"{}"`...)
	case isString:
		return append(dst, args...)
	}
	return respAppendQuotedCompact(dst, args)
}

// respAppendQuotedCompact appends the raw JSON value v, compacted, as a JSON
// string literal. It compacts into dst's tail and quotes from there, so no
// temporary buffer is needed.
func respAppendQuotedCompact(dst, v []byte) []byte {
	start := len(dst)
	dst = codec.Compact(dst, v)
	end := len(dst)
	dst = codec.AppendQuoted(dst, dst[start:end])
	n := copy(dst[start:], dst[end:])
	return dst[:start+n]
}

// respAppendCustomInput appends a custom tool call's free-text input as a JSON
// string: Args itself when it is a string, else the `input` member of an
// object (a call that came back through a function-only provider).
func respAppendCustomInput(dst []byte, p *codec.Part) []byte {
	if p.ArgsString {
		return append(dst, p.Args...)
	}
	if len(p.Args) == 0 {
		return append(dst, `""`...)
	}
	if in := codec.Get(p.Args, "input"); in.Type == gjson.String {
		return append(dst, in.Raw...)
	}
	return respAppendQuotedCompact(dst, p.Args)
}

// toolResult writes a function_call_output (custom_tool_call_output for a
// custom tool's call) and returns how many child parts it consumed.
func (w *responsesWriter) toolResult(p *codec.Part, children []codec.Part) int {
	w.item()
	if w.isCustomCall(p.ID) {
		w.dst = append(w.dst, `{"type":"custom_tool_call_output","call_id":`...)
	} else {
		w.dst = append(w.dst, `{"type":"function_call_output","call_id":`...)
	}
	w.dst = codec.AppendString(w.dst, p.ID)
	w.dst = append(w.dst, `,"output":`...)
	w.dst = respAppendToolOutput(w.dst, p.IsError, children)
	w.dst = append(w.dst, '}')
	return len(children)
}

// respErrorPrefix marks a failed tool result, which Responses has no field for.
const respErrorPrefix = "Error: "

// respAppendToolOutput appends a tool result's output: a string when it holds
// only text (several texts joined by "\n"), else input_text/input_image
// parts. IsError prefixes the text with "Error: ".
func respAppendToolOutput(dst []byte, isError bool, children []codec.Part) []byte {
	if !respHasImage(children) {
		dst = append(dst, '"')
		if isError {
			dst = append(dst, respErrorPrefix...)
		}
		for i := range children {
			if i > 0 {
				dst = append(dst, `\n`...)
			}
			dst = append(dst, children[i].Text...)
		}
		return append(dst, '"')
	}
	dst = append(dst, '[')
	if isError {
		dst = append(dst, `{"type":"input_text","text":"`+respErrorPrefix+`"},`...)
	}
	for i := range children {
		c := &children[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if c.Kind == codec.PartImage {
			dst = respAppendInputImage(dst, c)
			continue
		}
		dst = append(dst, `{"type":"input_text","text":`...)
		dst = codec.AppendString(dst, c.Text)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func respHasImage(parts []codec.Part) bool {
	for i := range parts {
		if parts[i].Kind == codec.PartImage {
			return true
		}
	}
	return false
}

// isCustomCall reports whether the tool call with the given id called a
// custom tool.
func (w *responsesWriter) isCustomCall(id []byte) bool {
	for i := range w.r.Parts {
		p := &w.r.Parts[i]
		if p.Kind == codec.PartToolCall && string(p.ID) == string(id) {
			if p.Custom {
				return true
			}
			t := w.r.FindTool(p.Name)
			return t != nil && t.Kind == codec.ToolCustom
		}
	}
	return false
}

// reasoning rebuilds a reasoning item from a thinking part that carries a
// replay token; without one OpenAI cannot use it, so it is dropped.
func (w *responsesWriter) reasoning(p *codec.Part) {
	if len(p.Signature) == 0 {
		return
	}
	w.item()
	w.dst = append(w.dst, `{"type":"reasoning","summary":[`...)
	if len(p.Text) > 0 {
		w.dst = append(w.dst, `{"type":"summary_text","text":`...)
		w.dst = codec.AppendString(w.dst, p.Text)
		w.dst = append(w.dst, '}')
	}
	w.dst = append(w.dst, `],"encrypted_content":`...)
	w.dst = codec.AppendString(w.dst, p.Signature)
	w.dst = append(w.dst, '}')
}
