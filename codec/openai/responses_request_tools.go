package openai

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// tool reads one entry of `tools`; it is a gjson.ForEach callback.
// Hosted tools (web_search, tool_search, file_search, mcp, local_shell,
// image_generation, code_interpreter, computer_use ...) are dropped.
func (rd *responsesReader) tool(_, t gjson.Result) bool {
	switch t.Get("type").Raw {
	case `"function"`, `"custom"`:
		rd.addTool(t, respStr(t, "name"))
	case `"namespace"`:
		ns := respStr(t, "name")
		t.Get("tools").ForEach(func(_, inner gjson.Result) bool {
			switch inner.Get("type").Raw {
			case `"function"`, `"custom"`, "":
				rd.addTool(inner, appendFlatName(rd.r, ns, respStr(inner, "name")))
			}
			return true
		})
	}
	return true
}

// addTool appends a function or custom tool definition named name.
func (rd *responsesReader) addTool(t gjson.Result, name []byte) {
	if len(name) == 0 || rd.r.FindTool(name) != nil {
		return // nameless or duplicate (two namespaces flattening alike): first wins
	}
	tool := codec.Tool{
		Name:        name,
		Description: respStr(t, "description"),
		Strict:      t.Get("strict").Type == gjson.True,
	}
	if t.Get("type").Raw == `"custom"` {
		tool.Kind = codec.ToolCustom
		tool.Format = codec.Raw(t.Get("format"))
	} else if schema := t.Get("parameters"); schema.IsObject() {
		tool.Schema = codec.Raw(schema)
	}
	rd.r.Tools = append(rd.r.Tools, tool)
}

// readResponsesToolChoice maps tool_choice. allowed_tools keeps
// only its mode; a hosted tool choice becomes auto.
func readResponsesToolChoice(r *codec.Request, v gjson.Result) {
	tc := &r.ToolChoice
	switch v.Raw {
	case `"auto"`:
		tc.Mode = codec.ToolChoiceAuto
	case `"none"`:
		tc.Mode = codec.ToolChoiceNone
	case `"required"`:
		tc.Mode = codec.ToolChoiceAny
	}
	if !v.IsObject() {
		return
	}
	switch v.Get("type").Raw {
	case `"function"`, `"custom"`:
		tc.Mode, tc.Name = codec.ToolChoiceTool, respStr(v, "name")
	case `"allowed_tools"`:
		tc.Mode = codec.ToolChoiceAuto
		if v.Get("mode").Raw == `"required"` {
			tc.Mode = codec.ToolChoiceAny
		}
	default:
		tc.Mode = codec.ToolChoiceAuto
	}
}

// readResponsesReasoning maps reasoning {effort, summary}; `null` (Codex
// with reasoning off) leaves it unset.
func readResponsesReasoning(r *codec.Request, v gjson.Result) {
	if !v.IsObject() {
		return
	}
	r.Reasoning.Effort = codec.ParseEffort(respStr(v, "effort"))
	if s := v.Get("summary"); s.Type == gjson.String && s.Raw != `"none"` {
		r.Reasoning.Summary = true
	}
}

// readResponsesFormat maps text.format (flat json_schema).
func readResponsesFormat(r *codec.Request, v gjson.Result) {
	f := &r.Format
	switch v.Get("type").Raw {
	case `"text"`:
		f.Kind = codec.FormatText
	case `"json_object"`:
		f.Kind = codec.FormatJSONObject
	case `"json_schema"`:
		f.Kind = codec.FormatJSONSchema
		f.Name = respStr(v, "name")
		f.Schema = codec.Raw(v.Get("schema"))
		f.Strict = v.Get("strict").Type == gjson.True
	}
}
