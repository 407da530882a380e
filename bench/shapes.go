package bench

// The four request shapes. Each is a head (model, flags, system, tools, up
// to the opening of the conversation array), a turn (one round of user
// text, assistant tool call and tool result, each ending in a comma) and
// a final user message whose text pads the body to the exact size asked.
// The same seed with a larger size yields the same turns plus more, which
// is how a session grows turn by turn.

// shape describes one dialect's request body layout.
type shape struct {
	head        func(g *gen, dst []byte, o BodyOpts) []byte
	turn        func(g *gen, dst []byte) []byte
	finalPrefix string // opens the final user message, up to its text
	finalSuffix string // closes the final message and the whole body
}

// BodyOpts selects the variant of a generated body.
type BodyOpts struct {
	Model  string // written as the body's model (not used for Gemini: the model is in the path)
	Size   int    // target size in bytes; met exactly unless the head alone is larger
	Seed   uint64 // equal seeds give equal bytes
	Stream bool   // sets "stream":true (Gemini streams by path instead)
	// CountTokens leaves out max_tokens and stream (Anthropic
	// count_tokens); only for the Claude shape.
	CountTokens bool
}

// appendBody appends a body of shape s as described by o.
func appendBody(dst []byte, s *shape, o BodyOpts) []byte {
	start := len(dst)
	g := newGen(o.Seed)
	dst = s.head(g, dst, o)
	closing := len(s.finalPrefix) + len(s.finalSuffix) + 64
	for {
		mark := len(dst)
		dst = s.turn(g, dst)
		if len(dst)-start+closing > o.Size {
			dst = dst[:mark]
			break
		}
	}
	pad := o.Size - (len(dst) - start) - len(s.finalPrefix) - len(s.finalSuffix)
	dst = append(dst, s.finalPrefix...)
	dst = g.appendProse(dst, max(pad, 8))
	return append(dst, s.finalSuffix...)
}

// AppendClaudeBody appends a Claude-Code-shaped /v1/messages body: three
// system blocks, tools with "$schema" in their input_schema, metadata,
// thinking, and a conversation of text, tool_use and tool_result blocks.
func AppendClaudeBody(dst []byte, o BodyOpts) []byte {
	return appendBody(dst, &claudeShape, o)
}

// AppendChatBody appends an OpenAI Chat Completions body with a system
// message, function tools, and tool_calls / tool turns.
func AppendChatBody(dst []byte, o BodyOpts) []byte {
	return appendBody(dst, &chatShape, o)
}

// AppendResponsesBody appends a Codex-shaped /v1/responses body: store
// false, function and custom (grammar) tools, reasoning, include,
// prompt_cache_key, and input items with client-made ids.
func AppendResponsesBody(dst []byte, o BodyOpts) []byte {
	return appendBody(dst, &responsesShape, o)
}

// AppendGeminiBody appends a Gemini generateContent body.
func AppendGeminiBody(dst []byte, o BodyOpts) []byte {
	return appendBody(dst, &geminiShape, o)
}

var claudeShape = shape{
	head:        claudeHead,
	turn:        claudeTurn,
	finalPrefix: `{"role":"user","content":"`,
	finalSuffix: `"}],"thinking":{"type":"adaptive"},"output_config":{"effort":"high"}}`,
}

func claudeHead(g *gen, dst []byte, o BodyOpts) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendQuoted(dst, o.Model)
	if !o.CountTokens {
		dst = append(dst, `,"max_tokens":64000,"stream":`...)
		dst = appendBool(dst, o.Stream)
		dst = append(dst, `,"metadata":{"user_id":"{\"session_id\":`...)
		dst = appendEscapedID(dst, g)
		dst = append(dst, `}"}`...)
	}
	dst = append(dst, `,"system":[{"type":"text","text":"x-bench-billing: seed"},{"type":"text","text":`...)
	dst = g.appendJSONText(dst, 1200, false)
	dst = append(dst, `,"cache_control":{"type":"ephemeral"}},{"type":"text","text":`...)
	dst = g.appendJSONText(dst, 600, false)
	dst = append(dst, `}],"tools":[`...)
	for i := 0; i < toolCount(o.Size); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendQuoted(dst, toolNames[i])
		dst = append(dst, `,"description":`...)
		dst = g.appendJSONText(dst, 300+g.r.IntN(900), false)
		dst = append(dst, `,"input_schema":`...)
		dst = g.appendSchema(dst, 1+g.r.IntN(4), true)
		dst = append(dst, '}')
	}
	return append(dst, `],"messages":[`...)
}

func claudeTurn(g *gen, dst []byte) []byte {
	dst = append(dst, `{"role":"user","content":[{"type":"text","text":`...)
	dst = g.appendJSONText(dst, 100+g.r.IntN(1400), false)
	dst = append(dst, `}]},{"role":"assistant","content":[{"type":"text","text":`...)
	dst = g.appendJSONText(dst, 100+g.r.IntN(800), false)
	dst = append(dst, `},{"type":"tool_use","id":`...)
	idStart := len(dst)
	dst = g.appendID(dst, "toolu_")
	id := string(dst[idStart:])
	dst = append(dst, `,"name":"read_file","input":{"path":"server/stream.go"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"content":`...)
	dst = g.appendJSONText(dst, 500+g.r.IntN(5500), true)
	return append(dst, `}]},`...)
}

var chatShape = shape{
	head:        chatHead,
	turn:        chatTurn,
	finalPrefix: `{"role":"user","content":"`,
	finalSuffix: `"}],"max_completion_tokens":4096}`,
}

func chatHead(g *gen, dst []byte, o BodyOpts) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendQuoted(dst, o.Model)
	dst = append(dst, `,"stream":`...)
	dst = appendBool(dst, o.Stream)
	if o.Stream {
		dst = append(dst, `,"stream_options":{"include_usage":true}`...)
	}
	dst = append(dst, `,"tools":[`...)
	for i := 0; i < toolCount(o.Size); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"function","function":{"name":`...)
		dst = appendQuoted(dst, toolNames[i])
		dst = append(dst, `,"description":`...)
		dst = g.appendJSONText(dst, 300+g.r.IntN(900), false)
		dst = append(dst, `,"parameters":`...)
		dst = g.appendSchema(dst, 1+g.r.IntN(4), false)
		dst = append(dst, `}}`...)
	}
	dst = append(dst, `],"messages":[{"role":"system","content":`...)
	dst = g.appendJSONText(dst, 1500, false)
	return append(dst, `},`...)
}

func chatTurn(g *gen, dst []byte) []byte {
	dst = append(dst, `{"role":"user","content":`...)
	dst = g.appendJSONText(dst, 100+g.r.IntN(1400), false)
	dst = append(dst, `},{"role":"assistant","content":null,"tool_calls":[{"id":`...)
	idStart := len(dst)
	dst = g.appendID(dst, "call_")
	id := string(dst[idStart:])
	dst = append(dst, `,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"server/stream.go\"}"}}]},{"role":"tool","tool_call_id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"content":`...)
	dst = g.appendJSONText(dst, 500+g.r.IntN(5500), true)
	return append(dst, `},`...)
}

var responsesShape = shape{
	head:        responsesHead,
	turn:        responsesTurn,
	finalPrefix: `{"type":"message","role":"user","content":[{"type":"input_text","text":"`,
	finalSuffix: `"}]}]}`,
}

func responsesHead(g *gen, dst []byte, o BodyOpts) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendQuoted(dst, o.Model)
	dst = append(dst, `,"stream":`...)
	dst = appendBool(dst, o.Stream)
	dst = append(dst, `,"store":false,"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"medium","summary":"auto"},"include":["reasoning.encrypted_content"],"prompt_cache_key":`...)
	dst = g.appendID(dst, "thread_")
	dst = append(dst, `,"text":{"verbosity":"low"},"client_metadata":{"originator":"bench"},"tools":[`...)
	for i := 0; i < toolCount(o.Size); i++ {
		dst = append(dst, `{"type":"function","name":`...)
		dst = appendQuoted(dst, toolNames[i])
		dst = append(dst, `,"strict":false,"description":`...)
		dst = g.appendJSONText(dst, 300+g.r.IntN(900), false)
		dst = append(dst, `,"parameters":`...)
		dst = g.appendSchema(dst, 1+g.r.IntN(4), false)
		dst = append(dst, `},`...)
	}
	dst = append(dst, `{"type":"custom","name":"apply_patch","description":"Apply a patch to files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch\nbegin_patch: \"*** Begin Patch\" LF\nend_patch: \"*** End Patch\" LF?\n"}}],"input":[{"type":"message","id":`...)
	dst = g.appendID(dst, "msg_")
	dst = append(dst, `,"role":"developer","content":[{"type":"input_text","text":`...)
	dst = g.appendJSONText(dst, 1500, false)
	return append(dst, `}]},`...)
}

func responsesTurn(g *gen, dst []byte) []byte {
	dst = append(dst, `{"type":"message","id":`...)
	dst = g.appendID(dst, "msg_")
	dst = append(dst, `,"role":"user","content":[{"type":"input_text","text":`...)
	dst = g.appendJSONText(dst, 100+g.r.IntN(1400), false)
	dst = append(dst, `}]},{"type":"reasoning","id":`...)
	dst = g.appendID(dst, "rs_")
	dst = append(dst, `,"summary":[{"type":"summary_text","text":`...)
	dst = g.appendJSONText(dst, 100+g.r.IntN(400), false)
	dst = append(dst, `}],"encrypted_content":"gAAAAB`...)
	dst = g.appendEncrypted(dst, 200+g.r.IntN(600))
	dst = append(dst, `"},{"type":"function_call","id":`...)
	dst = g.appendID(dst, "fc_")
	dst = append(dst, `,"call_id":`...)
	idStart := len(dst)
	dst = g.appendID(dst, "call_")
	id := string(dst[idStart:])
	dst = append(dst, `,"name":"run_shell","arguments":"{\"cmd\":\"go test ./...\"}"},{"type":"function_call_output","call_id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"output":`...)
	dst = g.appendJSONText(dst, 500+g.r.IntN(5500), true)
	return append(dst, `},`...)
}

var geminiShape = shape{
	head:        geminiHead,
	turn:        geminiTurn,
	finalPrefix: `{"role":"user","parts":[{"text":"`,
	finalSuffix: `"}]}]}`,
}

func geminiHead(g *gen, dst []byte, o BodyOpts) []byte {
	dst = append(dst, `{"systemInstruction":{"parts":[{"text":`...)
	dst = g.appendJSONText(dst, 1500, false)
	dst = append(dst, `}]},"generationConfig":{"maxOutputTokens":4096},"tools":[{"functionDeclarations":[`...)
	for i := 0; i < toolCount(o.Size); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendQuoted(dst, toolNames[i])
		dst = append(dst, `,"description":`...)
		dst = g.appendJSONText(dst, 300+g.r.IntN(900), false)
		dst = append(dst, `,"parametersJsonSchema":`...)
		dst = g.appendSchema(dst, 1+g.r.IntN(4), false)
		dst = append(dst, '}')
	}
	return append(dst, `]}],"contents":[`...)
}

func geminiTurn(g *gen, dst []byte) []byte {
	dst = append(dst, `{"role":"user","parts":[{"text":`...)
	dst = g.appendJSONText(dst, 100+g.r.IntN(1400), false)
	dst = append(dst, `}]},{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"path":"server/stream.go"}}}]},{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":`...)
	dst = g.appendJSONText(dst, 500+g.r.IntN(5500), true)
	return append(dst, `}}}]},`...)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendEscapedID appends an id as an escaped JSON string inside a JSON
// string (metadata.user_id holds JSON text).
func appendEscapedID(dst []byte, g *gen) []byte {
	dst = append(dst, `\"`...)
	id := g.appendID(nil, "sess_")
	dst = append(dst, id[1:len(id)-1]...)
	return append(dst, `\"`...)
}

// appendEncrypted appends n base64-alphabet characters, like an opaque
// encrypted reasoning blob.
func (g *gen) appendEncrypted(dst []byte, n int) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := 0; i < n; i++ {
		dst = append(dst, alphabet[g.r.IntN(len(alphabet))])
	}
	return dst
}
