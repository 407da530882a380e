package openai

import (
	"slipstream/codec"
)

// appendResponse appends the response object with the given status:
// the output written so far, the client's request echoed (model, sampling,
// tool choice, reasoning, format; tools as []), usage on the terminal
// statuses, and error for "failed".
func (e *ResponsesEncoder) appendResponse(dst []byte, status string, err *codec.Error) []byte {
	req := e.req
	dst = append(dst, `{"id":"resp_`...)
	dst = append(dst, e.core...)
	dst = append(dst, `","object":"response","created_at":`...)
	dst = codec.AppendInt(dst, req.Created)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","background":false,"error":`...)
	dst = appendResponseError(dst, err)
	dst = append(dst, `,"incomplete_details":`...)
	switch {
	case status != "incomplete":
		dst = append(dst, "null"...)
	case e.stop == codec.StopRefusal:
		dst = append(dst, `{"reason":"content_filter"}`...)
	default:
		dst = append(dst, `{"reason":"max_output_tokens"}`...)
	}
	dst = append(dst, `,"instructions":null,"max_output_tokens":`...)
	dst = respAppendIntOrNull(dst, req.MaxTokens)
	dst = append(dst, `,"model":`...)
	dst = codec.AppendString(dst, req.Model)
	dst = append(dst, `,"output":[`...)
	if status != "in_progress" {
		dst = append(dst, e.out...)
	}
	dst = append(dst, `],"parallel_tool_calls":`...)
	if req.Parallel < 0 {
		dst = append(dst, "false"...)
	} else {
		dst = append(dst, "true"...)
	}
	dst = append(dst, `,"previous_response_id":null,"reasoning":`...)
	dst = appendResponseReasoning(dst, &req.Reasoning)
	dst = append(dst, `,"store":false,"temperature":`...)
	dst = respAppendRawOr(dst, req.Temperature, "1.0")
	dst = append(dst, `,"text":{"format":`...)
	dst = appendResponseFormat(dst, &req.Format)
	dst = append(dst, `},"tool_choice":`...)
	dst = appendResponseToolChoice(dst, &req.ToolChoice)
	dst = append(dst, `,"tools":[],"top_p":`...)
	dst = respAppendRawOr(dst, req.TopP, "1.0")
	dst = append(dst, `,"truncation":"disabled","usage":`...)
	if status == "in_progress" || status == "failed" && !e.usage.Known {
		dst = append(dst, "null"...)
	} else {
		dst = AppendResponsesUsage(dst, &e.usage)
	}
	return append(dst, `,"metadata":{}}`...)
}

// AppendResponsesUsage appends a Responses usage object with every count an
// integer (unknown counts are 0): input_tokens (cached included),
// input_tokens_details {cached_tokens, cache_write_tokens}, output_tokens
// (reasoning included), output_tokens_details.reasoning_tokens and
// total_tokens.
func AppendResponsesUsage(dst []byte, u *codec.Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = codec.AppendInt(dst, u.Input)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = codec.AppendInt(dst, u.CacheRead)
	dst = append(dst, `,"cache_write_tokens":`...)
	dst = codec.AppendInt(dst, u.CacheWrite)
	dst = append(dst, `},"output_tokens":`...)
	dst = codec.AppendInt(dst, u.Output)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = codec.AppendInt(dst, u.Reasoning)
	dst = append(dst, `},"total_tokens":`...)
	dst = codec.AppendInt(dst, u.Input+u.Output)
	return append(dst, '}')
}

// appendResponseError appends response.error: {code, message} or null.
func appendResponseError(dst []byte, err *codec.Error) []byte {
	if err == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"code":`...)
	dst = AppendCode(dst, err)
	dst = append(dst, `,"message":`...)
	msg := err.Message
	if len(msg) == 0 {
		msg = codec.NoMessage
	}
	dst = codec.AppendString(dst, msg)
	return append(dst, '}')
}

func appendResponseReasoning(dst []byte, rs *codec.Reasoning) []byte {
	dst = append(dst, `{"effort":`...)
	if effort := responsesEffort(rs); effort != codec.EffortUnset {
		dst = append(dst, '"')
		dst = append(dst, effort.String()...)
		dst = append(dst, '"')
	} else {
		dst = append(dst, "null"...)
	}
	if rs.Summary {
		return append(dst, `,"summary":"auto"}`...)
	}
	return append(dst, `,"summary":null}`...)
}

func appendResponseFormat(dst []byte, f *codec.Format) []byte {
	switch f.Kind {
	case codec.FormatJSONObject:
		return append(dst, `{"type":"json_object"}`...)
	case codec.FormatJSONSchema:
		dst = append(dst, `{"type":"json_schema","name":`...)
		if len(f.Name) > 0 {
			dst = codec.AppendString(dst, f.Name)
		} else {
			dst = append(dst, `"response"`...)
		}
		// Compacted: a client's pretty-printed schema would break the
		// SSE data line it is echoed in.
		dst = append(dst, `,"schema":`...)
		if len(f.Schema) == 0 {
			dst = append(dst, `{"type":"object"}`...)
		} else {
			dst = codec.Compact(dst, f.Schema)
		}
		if f.Strict {
			return append(dst, `,"strict":true}`...)
		}
		return append(dst, `,"strict":false}`...)
	}
	return append(dst, `{"type":"text"}`...)
}

func appendResponseToolChoice(dst []byte, tc *codec.ToolChoice) []byte {
	switch tc.Mode {
	case codec.ToolChoiceAny:
		return append(dst, `"required"`...)
	case codec.ToolChoiceNone:
		return append(dst, `"none"`...)
	case codec.ToolChoiceTool:
		dst = append(dst, `{"type":"function","name":`...)
		dst = codec.AppendString(dst, tc.Name)
		return append(dst, '}')
	}
	return append(dst, `"auto"`...)
}

func respAppendIntOrNull(dst []byte, n int64) []byte {
	if n <= 0 {
		return append(dst, "null"...)
	}
	return codec.AppendInt(dst, n)
}

func respAppendRawOr(dst, raw []byte, def string) []byte {
	if len(raw) == 0 {
		return append(dst, def...)
	}
	return append(dst, raw...)
}
