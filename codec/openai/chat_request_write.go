package openai

import (
	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// AppendChatRequest appends r as a Chat Completions upstream request
// (https://platform.openai.com/docs/api-reference/chat) to dst in one pass and returns it. model is the
// upstream model name as escaped JSON string content.
//
// Mapping: r.System becomes one leading system message (pieces joined with
// "\n\n"), RoleSystem messages stay system messages; a user message holding
// tool results is split into one tool message per result (text children
// joined with "\n\n", "Error: " prefixed when IsError) followed by a user
// message with the remaining text and images, images inside tool results
// included (Chat tool messages cannot carry images); tool calls become
// tool_calls with a JSON-string arguments (objects are compacted and quoted,
// empty arguments become "{}"); a custom tool call becomes a function call
// whose arguments are {"input": text}, and a custom tool a function taking
// one string "input" (its format grammar is appended to the description).
// With r.Stream, stream_options.include_usage is always set so that usage
// can be reported.
//
// Dropped deliberately: PartThinking and PartRedactedThinking (Chat has no
// slot for reasoning in requests), images in assistant messages, top_k,
// reasoning summary, stop sequences past the fourth (Chat allows four).
// r.N is passed through: only writers of other dialects reject n > 1.
// max_completion_tokens is used, not the deprecated max_tokens.
func AppendChatRequest(dst []byte, r *codec.Request, model []byte) ([]byte, error) {
	dst = append(dst, `{"model":"`...)
	dst = append(dst, model...)
	dst = append(dst, `","messages":[`...)
	dst = chatAppendMessages(dst, r)
	dst = append(dst, ']')
	dst = chatAppendTools(dst, r)
	dst = chatAppendSampling(dst, r)
	dst = chatAppendReasoning(dst, &r.Reasoning)
	dst = chatAppendFormat(dst, r)
	if r.Stream {
		dst = append(dst, `,"stream":true,"stream_options":{"include_usage":true}`...)
	}
	return append(dst, '}'), nil
}

// chatMaxStop is how many stop sequences Chat accepts.
const chatMaxStop = 4

// chatAppendSampling appends max tokens, temperature, top_p, stop and n.
func chatAppendSampling(dst []byte, r *codec.Request) []byte {
	if r.MaxTokens > 0 {
		dst = append(dst, `,"max_completion_tokens":`...)
		dst = codec.AppendInt(dst, r.MaxTokens)
	}
	if r.Temperature != nil {
		dst = append(dst, `,"temperature":`...)
		dst = append(dst, r.Temperature...)
	}
	if r.TopP != nil {
		dst = append(dst, `,"top_p":`...)
		dst = append(dst, r.TopP...)
	}
	if len(r.Stop) > 0 {
		dst = append(dst, `,"stop":[`...)
		for i, s := range r.Stop[:min(len(r.Stop), chatMaxStop)] {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = codec.AppendString(dst, s)
		}
		dst = append(dst, ']')
	}
	if r.N > 0 {
		dst = append(dst, `,"n":`...)
		dst = codec.AppendInt(dst, r.N)
	}
	return dst
}

// chatAppendReasoning appends reasoning_effort from the effort, or from a
// thinking budget by the nearest effort bucket (docs/TRANSLATION.md) (a dynamic budget leaves
// the model's default).
func chatAppendReasoning(dst []byte, rs *codec.Reasoning) []byte {
	e := rs.Effort
	if e == codec.EffortUnset {
		e = ChatEffortForBudget(rs.Budget)
	}
	if e.String() == "" {
		return dst
	}
	dst = append(dst, `,"reasoning_effort":"`...)
	dst = append(dst, e.String()...)
	return append(dst, '"')
}

// ChatEffortForBudget maps a thinking budget in tokens to the nearest effort
// bucket (codec.EffortForBudget, docs/TRANSLATION.md), capped at high;
// 0 (unset) and -1 (dynamic) give EffortUnset.
func ChatEffortForBudget(budget int64) codec.Effort {
	return min(codec.EffortForBudget(budget), codec.EffortHigh)
}

// chatAppendFormat appends response_format. A json_schema without a name
// gets "response" (Chat requires one); json_object only goes out when the
// request mentions JSON (jsonModeAllowed).
func chatAppendFormat(dst []byte, r *codec.Request) []byte {
	f := &r.Format
	switch f.Kind {
	case codec.FormatText:
		return append(dst, `,"response_format":{"type":"text"}`...)
	case codec.FormatJSONObject:
		if !jsonModeAllowed(r) {
			return dst
		}
		return append(dst, `,"response_format":{"type":"json_object"}`...)
	case codec.FormatJSONSchema:
	default:
		return dst
	}
	dst = append(dst, `,"response_format":{"type":"json_schema","json_schema":{"name":`...)
	if len(f.Name) > 0 {
		dst = codec.AppendString(dst, f.Name)
	} else {
		dst = append(dst, `"response"`...)
	}
	dst = appendFormatSchema(dst, f, "")
	return append(dst, `}}`...)
}

// chatAppendTools appends tools, tool_choice and parallel_tool_calls
// (the last only with tools: OpenAI rejects it otherwise).
func chatAppendTools(dst []byte, r *codec.Request) []byte {
	if len(r.Tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i := range r.Tools {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = chatAppendTool(dst, &r.Tools[i])
		}
		dst = append(dst, ']')
		if r.Parallel != 0 {
			dst = append(dst, `,"parallel_tool_calls":`...)
			dst = chatAppendBool(dst, r.Parallel > 0)
		}
	}
	return chatAppendToolChoice(dst, &r.ToolChoice)
}

func chatAppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// chatEmptySchema is the parameters of a tool that declared none.
const chatEmptySchema = `{"type":"object","properties":{}}`

// chatInputSchema is the parameters of a custom (free-text) tool.
const chatInputSchema = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`

// chatAppendTool appends one tool definition as a function tool.
func chatAppendTool(dst []byte, t *codec.Tool) []byte {
	dst = append(dst, `{"type":"function","function":{"name":`...)
	dst = codec.AppendString(dst, t.Name)
	if len(t.Description) > 0 || t.Kind == codec.ToolCustom && t.Format != nil {
		dst = append(dst, `,"description":"`...)
		dst = append(dst, t.Description...)
		if t.Kind == codec.ToolCustom {
			dst = ChatAppendFormatNote(dst, t.Format, len(t.Description) > 0)
		}
		dst = append(dst, '"')
	}
	dst = append(dst, `,"parameters":`...)
	switch {
	case t.Kind == codec.ToolCustom:
		dst = append(dst, chatInputSchema...)
	case t.Schema != nil:
		dst = append(dst, t.Schema...)
	default:
		dst = append(dst, chatEmptySchema...)
	}
	if t.Strict && t.Kind == codec.ToolFunction {
		dst = append(dst, `,"strict":true`...)
	}
	return append(dst, `}}`...)
}

// ChatAppendFormatNote appends, as escaped string content, a sentence that
// describes a custom tool's input format (a grammar's syntax and
// definition) so that a model seeing the tool as a function of one string
// still knows what to write. Both the Chat shape ({type, grammar:{syntax,
// definition}}) and the Responses one ({type, syntax, definition}) are
// read. sep says whether a separator goes first.
// Formats without a definition add nothing.
func ChatAppendFormatNote(dst, format []byte, sep bool) []byte {
	g := codec.Get(format, "grammar") // Chat nests the grammar; Responses does not
	if !g.IsObject() {
		g = gjson.Parse(pool.B2S(format))
	}
	def := codec.Content(codec.Field(g, "definition"))
	if len(def) == 0 {
		return dst
	}
	if sep {
		dst = append(dst, `\n\n`...)
	}
	dst = append(dst, "The input must follow this "...)
	if syn := codec.Content(codec.Field(g, "syntax")); len(syn) > 0 {
		dst = append(dst, syn...)
		dst = append(dst, ' ')
	}
	dst = append(dst, `grammar:\n`...)
	return append(dst, def...)
}

// chatAppendToolChoice appends tool_choice.
func chatAppendToolChoice(dst []byte, tc *codec.ToolChoice) []byte {
	switch tc.Mode {
	case codec.ToolChoiceAuto:
		return append(dst, `,"tool_choice":"auto"`...)
	case codec.ToolChoiceAny:
		return append(dst, `,"tool_choice":"required"`...)
	case codec.ToolChoiceNone:
		return append(dst, `,"tool_choice":"none"`...)
	case codec.ToolChoiceTool:
		dst = append(dst, `,"tool_choice":{"type":"function","function":{"name":`...)
		dst = codec.AppendString(dst, tc.Name)
		return append(dst, `}}`...)
	}
	return dst
}
