package codec

// Decoder reads one upstream response, streamed or not, into Events. Each
// dialect package has one concrete Decoder; codec/translate pools them.
//
// Events and the byte views they hold are valid until the next call on the
// same Decoder, or Reset.
type Decoder interface {
	// Reset prepares the decoder for a new response, keeping capacity.
	Reset()
	// DecodeEvent appends the Events for one upstream SSE event (name is
	// nil for unnamed events). It never returns an error for content it
	// does not recognise: unknown event types are skipped. It returns an
	// error only for malformed JSON in an event it must read.
	DecodeEvent(dst []Event, name, data []byte) ([]Event, error)
	// DecodeBody appends the whole Event sequence of a non-streamed
	// response body, from EventStart to EventEnd.
	DecodeBody(dst []Event, body []byte) ([]Event, error)
}

// Encoder writes Events in the client's dialect: SSE events when streaming,
// otherwise one JSON response body built up across calls.
//
// Encoders write the closing part of a response (stop reason, usage, the
// terminal event) when they see EventEnd, not EventFinish, because Chat and
// Gemini upstreams send usage after the finish reason. EventError ends the
// output with the dialect's in-band error (streaming) or error body
// (non-streaming); nothing is written after it.
type Encoder interface {
	// Reset prepares the encoder for a response to req (the client's
	// request in neutral form, borrowed until the response is done: it
	// tells the encoder the client-facing model, which tools are custom,
	// whether usage was asked for, and Created).
	Reset(req *Request, stream bool)
	// Append appends the output for ev to dst.
	Append(dst []byte, ev *Event) []byte
	// Done reports whether the encoder has written its terminal output
	// (after EventEnd or EventError).
	Done() bool
}
