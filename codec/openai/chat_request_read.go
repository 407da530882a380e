package openai

import (
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// errChatNoMessages reports a Chat request without a messages array.
var errChatNoMessages = errors.New("messages: must be an array")

// DecodeChatRequest reads a Chat Completions client request
// (https://platform.openai.com/docs/api-reference/chat) into r, which the caller Reset. body must be valid JSON and must
// outlive r: every field of r is a view into body.
//
// Mapping: leading system/developer messages go to r.System (one piece per
// string or text part), later ones become RoleSystem messages; tool messages
// become PartToolResult parts (their text as child parts) of one user
// message, and a user message right after them joins that message;
// assistant tool_calls become PartToolCall parts with ArgsString set
// (function.arguments is a JSON string), custom tool calls become PartToolCall
// with Custom set; reasoning_content/reasoning on assistant messages becomes
// a PartThinking. The legacy function role and function_call pair by name.
//
// Dropped deliberately: audio/file/input_audio content parts return an error
// (they cannot be carried); name on messages, seed, penalties, logprobs,
// logit_bias, user, metadata, store, service_tier, prompt_cache_key,
// verbosity, modalities, audio, prediction, web_search_options, the
// allowed_tools restriction of tool_choice (its mode is kept), and tools of
// types other than function/custom are ignored.
func DecodeChatRequest(r *codec.Request, body []byte) error {
	doc := pool.B2S(body)
	root := gjson.Parse(doc)
	if !root.IsObject() {
		return errors.New("request body must be a JSON object")
	}
	r.Model = codec.Content(codec.Field(root, "model"))
	r.Stream = root.Get("stream").Type == gjson.True
	r.IncludeUsage = root.Get("stream_options.include_usage").Type == gjson.True
	if err := chatReadMessages(r, root.Get("messages")); err != nil {
		return err
	}
	if err := chatReadTools(r, root.Get("tools")); err != nil {
		return err
	}
	chatReadToolChoice(r, root.Get("tool_choice"))
	chatReadParallel(r, root.Get("parallel_tool_calls"))
	chatReadSampling(r, root)
	chatReadFormat(r, root.Get("response_format"))
	r.Reasoning.Effort = codec.ParseEffort(codec.Content(codec.Field(root, "reasoning_effort")))
	return nil
}

// chatReadSampling reads max tokens, temperature, top_p, top_k, stop and n.
func chatReadSampling(r *codec.Request, root gjson.Result) {
	if v := root.Get("max_completion_tokens"); v.Type == gjson.Number {
		r.MaxTokens = v.Int()
	} else if v := root.Get("max_tokens"); v.Type == gjson.Number {
		r.MaxTokens = v.Int()
	}
	r.Temperature = chatNumber(root.Get("temperature"))
	r.TopP = chatNumber(root.Get("top_p"))
	r.TopK = chatNumber(root.Get("top_k"))
	if v := root.Get("n"); v.Type == gjson.Number {
		r.N = v.Int()
	}
	stop := root.Get("stop")
	if stop.Type == gjson.String {
		r.Stop = append(r.Stop, codec.Content(stop))
		return
	}
	if stop.IsArray() {
		stop.ForEach(func(_, s gjson.Result) bool {
			if s.Type == gjson.String {
				r.Stop = append(r.Stop, codec.Content(s))
			}
			return true
		})
	}
}

// chatNumber returns the raw JSON of a number, or nil for anything else.
func chatNumber(v gjson.Result) []byte {
	if v.Type != gjson.Number {
		return nil
	}
	return codec.Raw(v)
}

// chatReadParallel reads parallel_tool_calls.
func chatReadParallel(r *codec.Request, v gjson.Result) {
	switch v.Type {
	case gjson.True:
		r.Parallel = 1
	case gjson.False:
		r.Parallel = -1
	}
}

// chatReadFormat reads response_format.
func chatReadFormat(r *codec.Request, v gjson.Result) {
	switch v.Get("type").String() {
	case "text":
		r.Format.Kind = codec.FormatText
	case "json_object":
		r.Format.Kind = codec.FormatJSONObject
	case "json_schema":
		js := v.Get("json_schema")
		r.Format = codec.Format{
			Kind:   codec.FormatJSONSchema,
			Name:   codec.Content(codec.Field(js, "name")),
			Schema: chatObject(js.Get("schema")),
			Strict: js.Get("strict").Type == gjson.True,
		}
	}
}

// chatObject returns the raw JSON of an object, or nil for anything else.
func chatObject(v gjson.Result) []byte {
	if !v.IsObject() {
		return nil
	}
	return codec.Raw(v)
}

// chatReadTools reads tool definitions: function and custom tools; other
// types are dropped.
func chatReadTools(r *codec.Request, tools gjson.Result) error {
	if !tools.IsArray() {
		return nil
	}
	var err error
	i := -1
	tools.ForEach(func(_, t gjson.Result) bool {
		i++
		switch t.Get("type").String() {
		case "function", "":
			fn := t.Get("function")
			if !fn.IsObject() {
				err = fmt.Errorf("tools[%d]: function must be an object", i)
				return false
			}
			r.Tools = append(r.Tools, codec.Tool{
				Kind:        codec.ToolFunction,
				Name:        codec.Content(codec.Field(fn, "name")),
				Description: codec.Content(codec.Field(fn, "description")),
				Schema:      chatObject(fn.Get("parameters")),
				Strict:      fn.Get("strict").Type == gjson.True,
			})
		case "custom":
			c := t.Get("custom")
			r.Tools = append(r.Tools, codec.Tool{
				Kind:        codec.ToolCustom,
				Name:        codec.Content(codec.Field(c, "name")),
				Description: codec.Content(codec.Field(c, "description")),
				Format:      chatObject(c.Get("format")),
			})
		}
		return true
	})
	return err
}

// chatReadToolChoice reads tool_choice: a mode string or a named function
// or custom tool; allowed_tools keeps only its mode.
func chatReadToolChoice(r *codec.Request, v gjson.Result) {
	if v.Type == gjson.String {
		r.ToolChoice.Mode = chatChoiceMode(v.Str)
		return
	}
	if !v.IsObject() {
		return
	}
	switch v.Get("type").String() {
	case "function":
		r.ToolChoice = codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: codec.Content(v.Get("function.name"))}
	case "custom":
		r.ToolChoice = codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: codec.Content(v.Get("custom.name"))}
	case "allowed_tools":
		r.ToolChoice.Mode = chatChoiceMode(v.Get("allowed_tools.mode").String())
	}
}

func chatChoiceMode(s string) codec.ToolChoiceMode {
	switch s {
	case "auto":
		return codec.ToolChoiceAuto
	case "required":
		return codec.ToolChoiceAny
	case "none":
		return codec.ToolChoiceNone
	}
	return codec.ToolChoiceUnset
}
