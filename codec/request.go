package codec

// Request is the dialect-neutral form of a generation request, written by a
// dialect's request reader and read by another dialect's request writer.
//
// Every []byte field is a borrowed view into the client's request body (or
// into Scratch): valid until the body is released or the Request is Reset.
// Text-like fields (Text, ID, Name, Model, MediaType, URL, Signature,
// Description, Stop) hold JSON-escaped string content WITHOUT the quotes,
// exactly as it appeared in the source, so writers emit '"' + field + '"'.
// Raw fields (Schema, Args when !ArgsString, Format, Temperature ...) hold a
// complete JSON value.
//
// The structure follows Anthropic's turn model, the strictest of the four:
// system text is hoisted into System; tool results are parts of a user
// message; consecutive tool calls are parts of one assistant message.
// Writers for other dialects split these as their format requires.
type Request struct {
	Model  []byte
	Stream bool

	// System holds the leading system/developer instructions in order
	// (Responses instructions first). Each element is one text piece;
	// writers that need one string join them with "\n\n".
	System [][]byte

	Messages []Message
	Parts    []Part // all message parts; Message.Start/End index into it

	Tools      []Tool
	ToolChoice ToolChoice
	// Parallel is the client's parallel-tool-calls wish: 0 unset, 1 allowed,
	// -1 disabled.
	Parallel int8

	MaxTokens   int64  // 0: unset
	Temperature []byte // raw JSON number or nil
	TopP        []byte // raw JSON number or nil
	TopK        []byte // raw JSON number or nil
	Stop        [][]byte
	N           int64 // Chat n; 0 unset. Other dialects cannot serve n > 1.

	Reasoning Reasoning
	Format    Format

	// Created is the Unix time in seconds that encoders write into
	// created/created_at fields; the server stamps it, tests fix it.
	Created int64

	// IncludeUsage is Chat's stream_options.include_usage: the client wants
	// the final usage chunk.
	IncludeUsage bool

	// Scratch holds bytes a reader had to produce rather than borrow (for
	// example an object turned into an escaped string). Fields may point
	// into it; a reader appends and never reallocates it after a field
	// points into it, so it is sized before use (see ReserveScratch).
	Scratch []byte
}

// Role is the speaker of a message.
type Role uint8

// Roles. RoleSystem marks a system or developer message that appears after
// the first user or assistant turn (Claude Code and Chat clients do this).
const (
	RoleUser Role = iota
	RoleAssistant
	RoleSystem
)

// Message is one turn: Parts[Start:End] of its Request.
type Message struct {
	Role       Role
	Start, End int
}

// PartKind says what a Part holds.
type PartKind uint8

// Part kinds.
const (
	PartText             PartKind = iota // Text
	PartImage                            // MediaType + Text (base64 data), or URL
	PartToolCall                         // ID, Name, Args (Custom: Args is the free-text input as a JSON string)
	PartToolResult                       // ID (the call id), Name if known, IsError; its content is the next Children parts
	PartThinking                         // Text (visible reasoning, may be empty), Signature (replay token)
	PartRedactedThinking                 // Signature holds the opaque data
)

// Part is one piece of a message.
type Part struct {
	Kind PartKind

	Text      []byte
	ID        []byte
	Name      []byte
	MediaType []byte
	URL       []byte
	Signature []byte

	// Args is the tool call input. When ArgsString is true it is a JSON
	// string literal (with quotes) whose content is JSON text, as in the
	// OpenAI dialects; otherwise it is a raw JSON value (an object), as in
	// Anthropic and Gemini. Empty Args means no arguments ({}).
	Args       []byte
	ArgsString bool

	// Custom marks a call of a free-text (Responses "custom") tool.
	Custom bool

	IsError  bool
	Children int // PartToolResult: how many following parts are its content
}

// Tool is one tool definition.
type Tool struct {
	Kind        ToolKind
	Name        []byte
	Description []byte
	Schema      []byte // raw JSON Schema object; nil means no parameters
	Strict      bool
	// Format is a custom tool's raw input format (e.g. a Lark grammar);
	// it has no equivalent outside Responses and is only described.
	Format []byte
}

// ToolKind distinguishes tools with JSON arguments from free-text ones.
type ToolKind uint8

// Tool kinds.
const (
	ToolFunction ToolKind = iota
	ToolCustom            // free-text input; elsewhere a function of one string "input"
)

// ToolChoice is the client's tool_choice.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name []byte // ToolChoiceTool: the tool's name
}

// ToolChoiceMode is the kind of tool choice.
type ToolChoiceMode uint8

// Tool choice modes; ToolChoiceUnset leaves the target's default.
const (
	ToolChoiceUnset ToolChoiceMode = iota
	ToolChoiceAuto
	ToolChoiceAny // "required" in OpenAI, ANY in Gemini
	ToolChoiceNone
	ToolChoiceTool
)

// Reasoning is the client's reasoning/thinking request.
type Reasoning struct {
	Effort Effort
	// Budget is a thinking budget in tokens when the client gave one
	// (Anthropic budget_tokens, Gemini thinkingBudget); 0 unset, -1 dynamic.
	Budget int64
	// Summary asks for visible reasoning (Responses summary, Gemini
	// includeThoughts, Anthropic thinking display).
	Summary bool
}

// Effort is a reasoning effort level.
type Effort uint8

// Effort levels; EffortUnset leaves reasoning to the target's default and
// EffortNone turns it off.
const (
	EffortUnset Effort = iota
	EffortNone
	EffortMinimal
	EffortLow
	EffortMedium
	EffortHigh
	EffortXHigh
	EffortMax
)

// Format is the requested output format (structured output): Chat
// response_format, Responses text.format, Anthropic output_config.format,
// Gemini responseMimeType with responseJsonSchema or responseSchema.
//
// Whatever the dialect, the answer to a JSON format is plain JSON text in
// the assistant message. Schema is JSON Schema as the client sent it,
// except that the Gemini reader rewrites Gemini's OpenAPI form with
// AppendSchema and SchemaStandard (lower-case type names, nullable folded
// into the type, Gemini-only keys dropped). Writers apply SchemaStandard
// again (a client of another dialect may send that form too) and fit the
// schema to their provider's rules; other readers of Schema should do the
// same or treat type names case-insensitively.
type Format struct {
	Kind FormatKind
	// Name is the schema name (escaped content), or nil when the client
	// gave none (Anthropic, Gemini); writers that need one use "response".
	Name []byte
	// Schema is the raw JSON Schema of FormatJSONSchema; it may be nil.
	Schema []byte
	// Strict means the client wants the schema enforced, not just
	// suggested: Chat/Responses strict: true, and always for Anthropic
	// and Gemini, which enforce every schema.
	Strict bool
}

// FormatKind is the kind of output format.
type FormatKind uint8

// Output format kinds.
const (
	FormatUnset      FormatKind = iota // no format asked: the target's default
	FormatText                         // plain text asked explicitly
	FormatJSONObject                   // any JSON object (Chat/Responses json_object, Gemini application/json without a schema)
	FormatJSONSchema                   // JSON valid against Schema
)

// Reset empties r and keeps the capacity of its slices.
func (r *Request) Reset() {
	scratch := r.Scratch[:0]
	sys, msgs, parts, tools, stop := r.System[:0], r.Messages[:0], r.Parts[:0], r.Tools[:0], r.Stop[:0]
	clear(r.System[:cap(r.System)])
	clear(r.Parts[:cap(r.Parts)])
	clear(r.Tools[:cap(r.Tools)])
	clear(r.Stop[:cap(r.Stop)])
	*r = Request{System: sys, Messages: msgs, Parts: parts, Tools: tools, Stop: stop, Scratch: scratch}
}

// ReserveScratch makes sure Scratch can take n more bytes without moving,
// so views into it stay valid. Call it before the first append.
func (r *Request) ReserveScratch(n int) {
	if cap(r.Scratch)-len(r.Scratch) < n {
		if len(r.Scratch) > 0 {
			panic("BUG: ReserveScratch after Scratch is in use")
		}
		r.Scratch = make([]byte, 0, n)
	}
}

// AddMessage starts a message with the given role; following AddPart calls
// add to it.
func (r *Request) AddMessage(role Role) {
	r.Messages = append(r.Messages, Message{Role: role, Start: len(r.Parts), End: len(r.Parts)})
}

// AddPart appends p to the last message (starting a user message if there
// is none) and returns a pointer to it, valid until the next AddPart.
func (r *Request) AddPart(p Part) *Part {
	if len(r.Messages) == 0 {
		r.AddMessage(RoleUser)
	}
	r.Parts = append(r.Parts, p)
	r.Messages[len(r.Messages)-1].End = len(r.Parts)
	return &r.Parts[len(r.Parts)-1]
}

// LastRole returns the role of the last message and whether there is one.
func (r *Request) LastRole() (Role, bool) {
	if len(r.Messages) == 0 {
		return 0, false
	}
	return r.Messages[len(r.Messages)-1].Role, true
}

// MessageParts returns the parts of message i.
func (r *Request) MessageParts(i int) []Part {
	m := r.Messages[i]
	return r.Parts[m.Start:m.End]
}

// ToolName returns the name of the tool call with the given id found
// anywhere in the request, or nil. Gemini needs it for functionResponse.
func (r *Request) ToolName(id []byte) []byte {
	for i := range r.Parts {
		p := &r.Parts[i]
		if p.Kind == PartToolCall && string(p.ID) == string(id) {
			return p.Name
		}
	}
	return nil
}

// FindTool returns the tool definition with the given name, or nil.
func (r *Request) FindTool(name []byte) *Tool {
	for i := range r.Tools {
		if string(r.Tools[i].Name) == string(name) {
			return &r.Tools[i]
		}
	}
	return nil
}
