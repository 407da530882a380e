package codec

// Event is one dialect-neutral step of a model response. A stream decoder
// turns each upstream SSE event into zero or more Events; a response decoder
// turns a whole non-streamed body into the same sequence; encoders turn
// Events into the client's dialect.
//
// Byte fields are borrowed views valid until the decoder that produced them
// is called again (or Reset). Text-like fields hold JSON-escaped string
// content without quotes, as in Request.
//
// The sequence a decoder produces is:
//
//	EventStart (exactly once, first)
//	then any of: EventText, EventThinking, EventSignature, EventRedacted,
//	             EventToolCall followed by EventToolArgs*, EventBlockStop, EventUsage
//	then EventFinish (once), EventUsage*, and EventEnd (once, last);
//	or EventError at any point, which ends the sequence.
//
// Block identifies the upstream block or tool call an event belongs to
// (Anthropic content index, Chat tool_calls index, Responses output_index,
// Gemini part position). Encoders open a new output block whenever the
// kind or Block changes, and close the open one on EventBlockStop,
// EventFinish, or EventError; they never rely on EventBlockStop alone.
type Event struct {
	Kind  EventKind
	Block int

	// Text: EventText/EventThinking delta, EventToolArgs fragment of the
	// arguments' JSON text (escaped, as it would sit inside a JSON string),
	// EventSignature/EventRedacted opaque token, EventFinish matched stop
	// sequence.
	Text []byte

	// ID and Name: EventStart message id and Model; EventToolCall call id
	// and tool name.
	ID   []byte
	Name []byte

	// Custom marks an EventToolCall of a free-text tool (Responses custom
	// tool): its EventToolArgs carry the free text itself.
	Custom bool

	Stop  StopReason // EventFinish
	Usage Usage      // EventStart (input, if known), EventUsage, EventFinish
	Err   Error      // EventError
}

// EventKind is the kind of an Event.
type EventKind uint8

// Event kinds.
const (
	EventStart EventKind = iota
	EventText
	EventThinking
	EventSignature
	EventRedacted
	EventToolCall
	EventToolArgs
	EventBlockStop
	EventUsage
	EventFinish
	EventEnd
	EventError
)

// StopReason is why generation ended.
type StopReason uint8

// Stop reasons, after Anthropic's set (https://docs.anthropic.com/en/api/messages, stop_reason).
const (
	StopUnset StopReason = iota
	StopEndTurn
	StopMaxTokens
	StopSequence
	StopToolUse
	StopRefusal
	StopPause
	StopContextWindow
)

// Usage holds token counts in one dialect-neutral form. Input counts every
// prompt token (cached ones included), Output every generated token
// (reasoning included). Known is false when the upstream said nothing.
type Usage struct {
	Input      int64
	CacheRead  int64
	CacheWrite int64
	// CacheWrite1h is the part of CacheWrite written to a one-hour cache
	// (Anthropic's cache_creation.ephemeral_1h_input_tokens), which is
	// priced above the default five-minute write.
	CacheWrite1h int64
	Output       int64
	Reasoning    int64
	Known        bool
	// Estimated marks counts slipstream computed locally because the
	// upstream sent none.
	Estimated bool
}

// Merge takes the counts u2 knows about (non-zero fields) over u's, the way
// clients treat cumulative usage updates.
func (u *Usage) Merge(u2 *Usage) {
	if !u2.Known {
		return
	}
	u.Known = true
	u.Estimated = u2.Estimated
	if u2.Input != 0 {
		u.Input = u2.Input
	}
	if u2.CacheRead != 0 {
		u.CacheRead = u2.CacheRead
	}
	if u2.CacheWrite != 0 {
		u.CacheWrite = u2.CacheWrite
	}
	if u2.CacheWrite1h != 0 {
		u.CacheWrite1h = u2.CacheWrite1h
	}
	if u2.Output != 0 {
		u.Output = u2.Output
	}
	if u2.Reasoning != 0 {
		u.Reasoning = u2.Reasoning
	}
}
