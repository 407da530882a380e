package anthropic

import (
	"errors"
	"strconv"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// ErrN is returned by AppendRequest for a Chat request with n > 1, which
// Anthropic cannot serve.
var ErrN = errors.New("cannot translate request: n > 1 is not supported by this model's provider")

// emptySchema stands in for a tool without parameters: Anthropic requires
// input_schema.
const emptySchema = `{"type":"object","properties":{}}`

// customSchema is the input_schema of a free-text (Responses custom) tool.
const customSchema = `{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`

// AppendRequest appends an Anthropic Messages upstream request for r to
// dst, in one pass. model is the upstream model name as escaped JSON string
// content. It returns an error only for requests Anthropic cannot express
// (ErrN).
//
// Mapping (docs/TRANSLATION.md): System joined with "\n\n" into system; a
// RoleSystem message becomes user text; consecutive turns of one role are
// merged, tool_result blocks first; tool ids are sanitised (AppendToolID);
// string arguments are unescaped into an input object ("" -> {}, invalid
// -> {"_raw":"<the original string>"}); custom tools become a function of
// one string "input"; thinking parts without a signature are dropped
// (Anthropic rejects them). Reasoning -> thinking by the effort buckets of docs/TRANSLATION.md, max_tokens
// raised above the budget; with thinking on, temperature/top_p/top_k are
// dropped and a forced tool_choice becomes auto.
func AppendRequest(dst []byte, r *codec.Request, model []byte) ([]byte, error) {
	if r.N > 1 {
		return dst, ErrN
	}
	th := planThinking(r)
	dst = append(dst, `{"model":`...)
	dst = codec.AppendString(dst, model)
	dst = append(dst, `,"max_tokens":`...)
	dst = codec.AppendInt(dst, th.maxTokens)
	if len(r.System) > 0 {
		dst = append(dst, `,"system":`...)
		dst = codec.AppendJoined(dst, r.System, `\n\n`)
	}
	dst = appendMessages(dst, r)
	dst = appendTools(dst, r, th.on())
	dst = appendThinking(dst, &th)
	dst = appendOutputConfig(dst, r, &th)
	if !th.on() {
		dst = appendSampling(dst, r)
	}
	dst = appendStopSequences(dst, r.Stop)
	if r.Stream {
		dst = append(dst, `,"stream":true`...)
	}
	return append(dst, '}'), nil
}

type thinkingMode uint8

const (
	thinkingUnset thinkingMode = iota
	thinkingDisabled
	thinkingEnabled
	thinkingAdaptive
)

// thinkingPlan is what AppendRequest writes for reasoning.
type thinkingPlan struct {
	mode      thinkingMode
	budget    int64
	maxTokens int64
}

func (t *thinkingPlan) on() bool { return t.mode >= thinkingEnabled }

// planThinking maps r.Reasoning to Anthropic thinking and picks max_tokens.
// Thinking is turned off when the latest assistant turn of a tool loop was
// not replayed with a signed thinking block (a client of another dialect
// lost it), because Anthropic rejects that request.
func planThinking(r *codec.Request) thinkingPlan {
	t := thinkingPlan{maxTokens: r.MaxTokens}
	switch e := r.Reasoning.Effort; {
	case e == codec.EffortNone || e == codec.EffortMinimal:
		t.mode = thinkingDisabled
	case r.Reasoning.Budget < 0:
		t.mode = thinkingAdaptive
	case r.Reasoning.Budget > 0:
		t.mode, t.budget = thinkingEnabled, max(r.Reasoning.Budget, minBudget)
	case codec.BudgetForEffort(e) > 0:
		t.mode, t.budget = thinkingEnabled, codec.BudgetForEffort(e)
	}
	if t.on() && unsignedToolLoop(r) {
		t.mode, t.budget = thinkingDisabled, 0
	}
	if t.maxTokens <= 0 {
		t.maxTokens = max(defaultMaxTokens, t.budget+budgetHeadroom)
	} else if t.mode == thinkingEnabled && t.maxTokens <= t.budget {
		t.maxTokens = t.budget + budgetHeadroom
	}
	return t
}

// unsignedToolLoop reports whether the request ends in tool results whose
// assistant turn does not start with a signed thinking block.
func unsignedToolLoop(r *codec.Request) bool {
	n := len(r.Messages)
	if n < 2 || r.Messages[n-1].Role == codec.RoleAssistant || !hasToolResult(r.MessageParts(n-1)) {
		return false
	}
	for i := n - 2; i >= 0; i-- {
		if r.Messages[i].Role != codec.RoleAssistant {
			continue
		}
		for _, p := range r.MessageParts(i) {
			if emittable(&p) {
				return p.Kind != codec.PartRedactedThinking && p.Kind != codec.PartThinking
			}
		}
	}
	return false
}

func hasToolResult(parts []codec.Part) bool {
	for i := range parts {
		if parts[i].Kind == codec.PartToolResult {
			return true
		}
	}
	return false
}

func appendThinking(dst []byte, t *thinkingPlan) []byte {
	switch t.mode {
	case thinkingDisabled:
		return append(dst, `,"thinking":{"type":"disabled"}`...)
	case thinkingAdaptive:
		return append(dst, `,"thinking":{"type":"adaptive"}`...)
	case thinkingEnabled:
		dst = append(dst, `,"thinking":{"type":"enabled","budget_tokens":`...)
		dst = codec.AppendInt(dst, t.budget)
		return append(dst, '}')
	}
	return dst
}

// appendOutputConfig writes the effort of adaptive thinking and a JSON
// schema output format, every object closed (additionalProperties: false)
// and numeric and length bounds dropped, as Anthropic requires; it
// enforces the schema, so a non-strict client format becomes strict.
// json_object has no Anthropic form and is dropped.
func appendOutputConfig(dst []byte, r *codec.Request, t *thinkingPlan) []byte {
	effort := t.mode == thinkingAdaptive && r.Reasoning.Effort != codec.EffortUnset
	format := r.Format.Kind == codec.FormatJSONSchema && len(r.Format.Schema) > 0
	if !effort && !format {
		return dst
	}
	dst = append(dst, `,"output_config":{`...)
	if effort {
		dst = append(dst, `"effort":"`...)
		dst = append(dst, effortName(r.Reasoning.Effort)...)
		dst = append(dst, '"')
		if format {
			dst = append(dst, ',')
		}
	}
	if format {
		dst = append(dst, `"format":{"type":"json_schema","schema":`...)
		dst = codec.AppendSchema(dst, r.Format.Schema, codec.SchemaStandard|codec.SchemaAnthropic)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendSampling writes temperature (clamped to Anthropic's 0..1), top_p
// and top_k. Not called when thinking is on: Anthropic rejects them then.
func appendSampling(dst []byte, r *codec.Request) []byte {
	if len(r.Temperature) > 0 {
		dst = append(dst, `,"temperature":`...)
		dst = appendClamped(dst, r.Temperature)
	}
	if len(r.TopP) > 0 {
		dst = append(dst, `,"top_p":`...)
		dst = append(dst, r.TopP...)
	}
	if len(r.TopK) > 0 {
		dst = append(dst, `,"top_k":`...)
		dst = append(dst, r.TopK...)
	}
	return dst
}

func appendClamped(dst, num []byte) []byte {
	f, err := strconv.ParseFloat(pool.B2S(num), 64)
	switch {
	case err != nil || f < 0:
		return append(dst, '0')
	case f > 1:
		return append(dst, '1')
	}
	return append(dst, num...)
}

func appendStopSequences(dst []byte, stop [][]byte) []byte {
	if len(stop) == 0 {
		return dst
	}
	dst = append(dst, `,"stop_sequences":[`...)
	for i, s := range stop {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = codec.AppendString(dst, s)
	}
	return append(dst, ']')
}

// appendTools writes tools and tool_choice. tool_choice is left out when
// there are no tools (Anthropic rejects it then); with thinking on, any
// and tool become auto.
func appendTools(dst []byte, r *codec.Request, thinking bool) []byte {
	if len(r.Tools) == 0 {
		return dst
	}
	dst = append(dst, `,"tools":[`...)
	for i := range r.Tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendTool(dst, &r.Tools[i])
	}
	dst = append(dst, ']')
	return appendToolChoice(dst, r, thinking)
}

// appendTool writes one tool. A custom tool's format (e.g. a Lark grammar)
// is described in the description, the only place Anthropic can take it.
func appendTool(dst []byte, t *codec.Tool) []byte {
	dst = append(dst, `{"name":`...)
	dst = codec.AppendString(dst, t.Name)
	if len(t.Description) > 0 || len(t.Format) > 0 {
		dst = append(dst, `,"description":"`...)
		dst = append(dst, t.Description...)
		if len(t.Format) > 0 {
			dst = append(dst, `\n\nThe input must follow this format: `...)
			dst = codec.AppendEscaped(dst, t.Format)
		}
		dst = append(dst, '"')
	}
	dst = append(dst, `,"input_schema":`...)
	switch {
	case t.Kind == codec.ToolCustom:
		dst = append(dst, customSchema...)
	case len(t.Schema) > 0:
		dst = append(dst, t.Schema...)
	default:
		dst = append(dst, emptySchema...)
	}
	return append(dst, '}')
}

func appendToolChoice(dst []byte, r *codec.Request, thinking bool) []byte {
	mode := r.ToolChoice.Mode
	if thinking && (mode == codec.ToolChoiceAny || mode == codec.ToolChoiceTool) {
		mode = codec.ToolChoiceAuto
	}
	if mode == codec.ToolChoiceUnset {
		if r.Parallel >= 0 {
			return dst
		}
		mode = codec.ToolChoiceAuto
	}
	dst = append(dst, `,"tool_choice":{"type":"`...)
	switch mode {
	case codec.ToolChoiceAuto:
		dst = append(dst, `auto"`...)
	case codec.ToolChoiceAny:
		dst = append(dst, `any"`...)
	case codec.ToolChoiceNone:
		return append(dst, `none"}`...)
	case codec.ToolChoiceTool:
		dst = append(dst, `tool","name":`...)
		dst = codec.AppendString(dst, r.ToolChoice.Name)
	}
	if r.Parallel < 0 {
		dst = append(dst, `,"disable_parallel_tool_use":true`...)
	}
	return append(dst, '}')
}

// appendToolInput writes a tool call's input object (see AppendRequest).
func appendToolInput(dst []byte, p *codec.Part) []byte {
	args := p.Args
	switch {
	case len(args) == 0:
		return append(dst, "{}"...)
	case p.Custom && p.ArgsString:
		dst = append(dst, `{"input":`...)
		dst = append(dst, args...)
		return append(dst, '}')
	case !p.ArgsString:
		if isObject(args) {
			return append(dst, args...)
		}
		return appendRawInput(dst, args)
	}
	return appendUnescapedInput(dst, args)
}

// appendUnescapedInput unescapes a JSON string literal holding JSON text
// straight into dst and keeps it if it is an object.
func appendUnescapedInput(dst, lit []byte) []byte {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return appendRawInput(dst, lit)
	}
	mark := len(dst)
	dst, err := codec.AppendUnescaped(dst, lit[1:len(lit)-1])
	v := dst[mark:]
	if err == nil && isBlank(v) {
		return append(dst[:mark], "{}"...)
	}
	if err != nil || !isObject(v) || !gjson.Valid(pool.B2S(v)) {
		return appendRawInput(dst[:mark], lit)
	}
	return dst
}

// appendRawInput keeps arguments that are not a JSON object as
// {"_raw":<value>} so nothing the model wrote is lost.
func appendRawInput(dst, v []byte) []byte {
	dst = append(dst, `{"_raw":`...)
	if len(v) > 0 && !gjson.Valid(pool.B2S(v)) {
		dst = codec.AppendQuoted(dst, v)
	} else {
		dst = append(dst, v...)
	}
	return append(dst, '}')
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// isObject reports whether b's first non-space byte opens an object.
func isObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}
