package openai

import (
	"slipstream/codec"
)

// appendResponsesTools appends tools (flat function and custom tools) and
// tool_choice. A function without parameters gets an empty object schema.
func appendResponsesTools(dst []byte, r *codec.Request) []byte {
	if len(r.Tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i := range r.Tools {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendResponsesTool(dst, &r.Tools[i])
		}
		dst = append(dst, ']')
	}
	return appendResponsesToolChoice(dst, r)
}

func appendResponsesTool(dst []byte, t *codec.Tool) []byte {
	if t.Kind == codec.ToolCustom {
		dst = append(dst, `{"type":"custom","name":`...)
	} else {
		dst = append(dst, `{"type":"function","name":`...)
	}
	dst = codec.AppendString(dst, t.Name)
	if len(t.Description) > 0 {
		dst = append(dst, `,"description":`...)
		dst = codec.AppendString(dst, t.Description)
	}
	if t.Kind == codec.ToolCustom {
		if len(t.Format) > 0 {
			dst = append(dst, `,"format":`...)
			dst = append(dst, t.Format...)
		}
		return append(dst, '}')
	}
	dst = append(dst, `,"parameters":`...)
	if len(t.Schema) > 0 {
		dst = append(dst, t.Schema...)
	} else {
		dst = append(dst, `{"type":"object","properties":{}}`...)
	}
	if t.Strict {
		return append(dst, `,"strict":true}`...)
	}
	return append(dst, `,"strict":false}`...)
}

func appendResponsesToolChoice(dst []byte, r *codec.Request) []byte {
	switch r.ToolChoice.Mode {
	case codec.ToolChoiceAuto:
		dst = append(dst, `,"tool_choice":"auto"`...)
	case codec.ToolChoiceAny:
		dst = append(dst, `,"tool_choice":"required"`...)
	case codec.ToolChoiceNone:
		dst = append(dst, `,"tool_choice":"none"`...)
	case codec.ToolChoiceTool:
		if t := r.FindTool(r.ToolChoice.Name); t != nil && t.Kind == codec.ToolCustom {
			dst = append(dst, `,"tool_choice":{"type":"custom","name":`...)
		} else {
			dst = append(dst, `,"tool_choice":{"type":"function","name":`...)
		}
		dst = codec.AppendString(dst, r.ToolChoice.Name)
		dst = append(dst, '}')
	}
	switch r.Parallel {
	case 1:
		dst = append(dst, `,"parallel_tool_calls":true`...)
	case -1:
		dst = append(dst, `,"parallel_tool_calls":false`...)
	}
	return dst
}

// appendResponsesOptions appends reasoning, text.format, max_output_tokens,
// temperature and top_p.
func appendResponsesOptions(dst []byte, r *codec.Request) []byte {
	if effort := responsesEffort(&r.Reasoning); effort != codec.EffortUnset {
		dst = append(dst, `,"reasoning":{"effort":"`...)
		dst = append(dst, effort.String()...)
		dst = append(dst, '"')
		if r.Reasoning.Summary && effort != codec.EffortNone {
			dst = append(dst, `,"summary":"auto"`...)
		}
		dst = append(dst, '}')
		if effort != codec.EffortNone {
			dst = append(dst, `,"include":["reasoning.encrypted_content"]`...)
		}
	}
	dst = appendResponsesFormat(dst, r)
	if r.MaxTokens > 0 {
		dst = append(dst, `,"max_output_tokens":`...)
		dst = codec.AppendInt(dst, max(r.MaxTokens, respMinOutputTokens))
	}
	if len(r.Temperature) > 0 {
		dst = append(dst, `,"temperature":`...)
		dst = append(dst, r.Temperature...)
	}
	if len(r.TopP) > 0 {
		dst = append(dst, `,"top_p":`...)
		dst = append(dst, r.TopP...)
	}
	return dst
}

// responsesEffort returns the effort to ask for: the client's, or the
// bucket nearest a thinking budget (codec.EffortForBudget, capped at
// high; -1 dynamic is medium).
func responsesEffort(rs *codec.Reasoning) codec.Effort {
	if rs.Effort != codec.EffortUnset {
		return rs.Effort
	}
	if rs.Budget < 0 {
		return codec.EffortMedium
	}
	return min(codec.EffortForBudget(rs.Budget), codec.EffortHigh)
}

// appendResponsesFormat appends text.format; json_object only goes out
// when the request mentions JSON (jsonModeAllowed).
func appendResponsesFormat(dst []byte, r *codec.Request) []byte {
	f := &r.Format
	switch f.Kind {
	case codec.FormatText:
		return append(dst, `,"text":{"format":{"type":"text"}}`...)
	case codec.FormatJSONObject:
		if !jsonModeAllowed(r) {
			return dst
		}
		return append(dst, `,"text":{"format":{"type":"json_object"}}`...)
	case codec.FormatJSONSchema:
		dst = append(dst, `,"text":{"format":{"type":"json_schema","name":`...)
		if len(f.Name) > 0 {
			dst = codec.AppendString(dst, f.Name)
		} else {
			dst = append(dst, `"response"`...)
		}
		dst = appendFormatSchema(dst, f, `{"type":"object"}`)
		return append(dst, `}}`...)
	}
	return dst
}
