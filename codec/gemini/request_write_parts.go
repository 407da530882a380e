package gemini

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// defaultImageType is written for an inline image whose media type the
// client did not give; Gemini requires one.
const defaultImageType = "image/png"

// appendImage appends an open image part: {"inlineData":{...} or
// {"fileData":{...}, without the part's closing brace.
func appendImage(dst []byte, p *codec.Part) []byte {
	mt, data := p.MediaType, p.Text
	if p.URL != nil {
		m, d, ok := codec.ParseDataURL(p.URL)
		if !ok {
			dst = append(dst, `{"fileData":{`...)
			if len(mt) > 0 {
				dst = append(dst, `"mimeType":`...)
				dst = codec.AppendString(dst, mt)
				dst = append(dst, ',')
			}
			dst = append(dst, `"fileUri":`...)
			dst = codec.AppendString(dst, p.URL)
			return append(dst, '}')
		}
		mt, data = m, d
	}
	dst = append(dst, `{"inlineData":{"mimeType":`...)
	if len(mt) == 0 {
		mt = pool.S2B(defaultImageType)
	}
	dst = codec.AppendString(dst, mt)
	dst = append(dst, `,"data":`...)
	dst = codec.AppendString(dst, data)
	return append(dst, '}')
}

// appendCall appends an open functionCall part, without its closing brace.
func (w *reqWriter) appendCall(dst []byte, p *codec.Part) []byte {
	dst = append(dst, `{"functionCall":{"name":`...)
	dst = codec.AppendString(dst, p.Name)
	dst = append(dst, `,"args":`...)
	dst = appendArgs(dst, p)
	return append(dst, '}')
}

// appendArgs appends a call's arguments as a JSON object.
func appendArgs(dst []byte, p *codec.Part) []byte {
	args := p.Args
	isStr := len(args) >= 2 && args[0] == '"'
	switch {
	case p.Custom:
		dst = append(dst, `{"input":`...)
		if isStr {
			dst = append(dst, args...)
		} else {
			dst = append(dst, `""`...)
		}
		return append(dst, '}')
	case isStr:
		return appendArgsString(dst, args)
	case len(args) == 0:
		return append(dst, "{}"...)
	case args[0] == '{':
		return append(dst, args...)
	}
	return appendRawArgs(dst, args)
}

// appendArgsString unescapes a JSON string literal holding the arguments'
// JSON text straight into dst; empty text becomes {}, anything that is not
// a JSON object becomes {"_raw": <the string>}.
func appendArgsString(dst, lit []byte) []byte {
	content := lit[1 : len(lit)-1]
	if len(content) == 0 {
		return append(dst, "{}"...)
	}
	start := len(dst)
	dst, err := codec.AppendUnescaped(dst, content)
	if err == nil && isObject(dst[start:]) {
		return dst
	}
	return appendRawArgs(dst[:start], lit)
}

// isObject reports whether b is one valid JSON object.
func isObject(b []byte) bool {
	i := codec.SkipWS(b, 0)
	return i < len(b) && b[i] == '{' && gjson.Valid(pool.B2S(b))
}

// appendRawArgs wraps a value that is not an object as {"_raw": v}.
func appendRawArgs(dst, v []byte) []byte {
	dst = append(dst, `{"_raw":`...)
	dst = append(dst, v...)
	return append(dst, '}')
}

// toolResult writes a functionResponse part for p and its content, then the
// images of its content as parts of their own.
func (w *reqWriter) toolResult(role byte, p *codec.Part, children []codec.Part) {
	w.openPart(role)
	w.dst = append(w.dst, `{"functionResponse":{"name":`...)
	name := w.r.ToolName(p.ID)
	if len(name) == 0 {
		name = p.Name
	}
	if len(name) == 0 {
		name = pool.S2B("tool")
	}
	w.dst = codec.AppendString(w.dst, name)
	if p.IsError {
		w.dst = append(w.dst, `,"response":{"error":"`...)
	} else {
		w.dst = append(w.dst, `,"response":{"output":"`...)
	}
	n := 0
	for i := range children {
		if c := &children[i]; c.Kind == codec.PartText {
			if n > 0 {
				w.dst = append(w.dst, `\n`...)
			}
			w.dst = append(w.dst, c.Text...)
			n++
		}
	}
	w.dst = append(w.dst, `"}}`...)
	w.closePart(false)
	for i := range children {
		if c := &children[i]; c.Kind == codec.PartImage {
			w.openPart(role)
			w.dst = appendImage(w.dst, c)
			w.closePart(false)
		}
	}
}

// customSchema is the parameters of a free-text (custom) tool.
const customSchema = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`

// tools writes one functionDeclarations tool holding every tool.
func (w *reqWriter) tools() {
	if len(w.r.Tools) == 0 {
		return
	}
	w.dst = append(w.dst, `,"tools":[{"functionDeclarations":[`...)
	for i := range w.r.Tools {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		w.dst = appendDeclaration(w.dst, &w.r.Tools[i])
	}
	w.dst = append(w.dst, "]}]"...)
}

func appendDeclaration(dst []byte, t *codec.Tool) []byte {
	dst = append(dst, `{"name":`...)
	dst = codec.AppendString(dst, t.Name)
	grammar := codec.Content(gjson.Get(pool.B2S(t.Format), "definition"))
	if len(t.Description) > 0 || len(grammar) > 0 {
		dst = append(dst, `,"description":"`...)
		dst = append(dst, t.Description...)
		if len(grammar) > 0 {
			dst = append(dst, `\n\nThe input must follow this grammar:\n`...)
			dst = append(dst, grammar...)
		}
		dst = append(dst, '"')
	}
	switch {
	case t.Kind == codec.ToolCustom:
		dst = append(dst, `,"parametersJsonSchema":`+customSchema...)
	case len(t.Schema) > 0:
		dst = append(dst, `,"parametersJsonSchema":`...)
		dst = append(dst, t.Schema...)
	}
	return append(dst, '}')
}

// toolConfig writes functionCallingConfig (docs/TRANSLATION.md, tool_choice).
func (w *reqWriter) toolConfig() {
	tc := &w.r.ToolChoice
	if len(w.r.Tools) == 0 || tc.Mode == codec.ToolChoiceUnset {
		return
	}
	w.dst = append(w.dst, `,"toolConfig":{"functionCallingConfig":{"mode":"`...)
	switch tc.Mode {
	case codec.ToolChoiceAuto:
		w.dst = append(w.dst, `AUTO"`...)
	case codec.ToolChoiceNone:
		w.dst = append(w.dst, `NONE"`...)
	case codec.ToolChoiceAny:
		w.dst = append(w.dst, `ANY"`...)
	case codec.ToolChoiceTool:
		w.dst = append(w.dst, `ANY","allowedFunctionNames":[`...)
		w.dst = codec.AppendString(w.dst, tc.Name)
		w.dst = append(w.dst, ']')
	}
	w.dst = append(w.dst, "}}"...)
}
