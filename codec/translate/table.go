package translate

import (
	"slipstream/codec"
	"slipstream/codec/anthropic"
	"slipstream/codec/gemini"
	"slipstream/codec/openai"
)

// dialect is one row of the translation table: the pieces a dialect package
// exports, as plain function values so that a missing dialect is a nil
// field rather than a build failure.
type dialect struct {
	// decodeRequest reads a client request of the dialect (Reset r first).
	decodeRequest func(r *codec.Request, body []byte) error
	// appendRequest writes r as an upstream request of the dialect.
	appendRequest func(dst []byte, r *codec.Request, model []byte) ([]byte, error)
	// newDecoder and newEncoder make the concrete stream state machines;
	// Streams pool them per pair.
	newDecoder func() codec.Decoder
	newEncoder func() codec.Encoder
	// decodeError reads an upstream HTTP error body; appendError writes the
	// dialect's error body.
	decodeError func(body []byte, status int) codec.Error
	appendError func(dst []byte, e *codec.Error) []byte
	// checkStream validates a whole client stream of the dialect (tests).
	checkStream func(stream []byte) error
	// tail picks and resets the dialect's Tail in a Tails (Tails.For).
	tail func(t *Tails, model []byte, created int64) Tail
	// usageKey names the member of a response body that holds its usage
	// (quoted); readUsage reads that object (BodyUsage).
	usageKey  []byte
	readUsage func(obj []byte) codec.Usage
	// sentinel is the data of the dialect's terminal event when it is not
	// JSON (Chat's [DONE]), else nil (ValidRelayed).
	sentinel []byte
}

// dialects is the route -> translator table, indexed by codec.Dialect.
// A row whose functions are nil is a dialect that cannot be translated yet:
// DecodeRequest and AppendRequest return ErrUnsupported for it.
var dialects = [codec.NumDialects]dialect{
	codec.DialectAnthropic: {
		decodeRequest: anthropic.DecodeRequest,
		appendRequest: anthropic.AppendRequest,
		newDecoder:    func() codec.Decoder { return new(anthropic.Decoder) },
		newEncoder:    func() codec.Encoder { return new(anthropic.Encoder) },
		decodeError:   anthropic.DecodeError,
		appendError:   anthropic.AppendErrorObject,
		checkStream:   anthropic.CheckStream,
		tail:          anthropicTail,
		usageKey:      keyUsage,
		readUsage:     anthropic.ReadUsage,
	},
	codec.DialectChat: {
		decodeRequest: openai.DecodeChatRequest,
		appendRequest: openai.AppendChatRequest,
		newDecoder:    func() codec.Decoder { return new(openai.ChatDecoder) },
		newEncoder:    func() codec.Encoder { return new(openai.ChatEncoder) },
		decodeError:   openai.DecodeError,
		appendError:   openai.AppendErrorObject,
		checkStream:   openai.CheckChatStream,
		tail:          chatTail,
		usageKey:      keyUsage,
		readUsage:     openai.ReadChatUsage,
		sentinel:      done,
	},
	codec.DialectResponses: {
		decodeRequest: openai.DecodeResponsesRequest,
		appendRequest: openai.AppendResponsesRequest,
		newDecoder:    func() codec.Decoder { return new(openai.ResponsesDecoder) },
		newEncoder:    func() codec.Encoder { return new(openai.ResponsesEncoder) },
		decodeError:   openai.DecodeError,
		appendError:   openai.AppendErrorObject,
		checkStream:   openai.CheckResponsesStream,
		tail:          responsesTail,
		usageKey:      keyUsage,
		readUsage:     openai.ReadResponsesUsage,
	},
	codec.DialectGemini: {
		decodeRequest: gemini.DecodeRequest,
		appendRequest: gemini.AppendRequest,
		newDecoder:    func() codec.Decoder { return new(gemini.Decoder) },
		newEncoder:    func() codec.Encoder { return new(gemini.Encoder) },
		decodeError:   gemini.DecodeError,
		appendError:   gemini.AppendErrorObject,
		checkStream:   gemini.CheckStream,
		tail:          geminiTail,
		usageKey:      keyUsageMetadata,
		readUsage:     gemini.ReadUsage,
	},
}

// row returns d's table row, or nil when d is not a dialect. Fields of a
// dialect not wired yet are nil.
func row(d codec.Dialect) *dialect {
	if d == codec.DialectUnknown || int(d) >= len(dialects) {
		return nil
	}
	return &dialects[d]
}

// Supported reports whether requests and responses of dialect d can be
// translated.
func Supported(d codec.Dialect) bool { return requestsWired(d) && streamsWired(d) }

// requestsWired reports whether d's request reader and writer are in the
// table.
func requestsWired(d codec.Dialect) bool {
	t := row(d)
	return t != nil && t.decodeRequest != nil && t.appendRequest != nil
}

// streamsWired reports whether d's decoder and encoder are in the table.
func streamsWired(d codec.Dialect) bool {
	t := row(d)
	return t != nil && t.newDecoder != nil && t.newEncoder != nil
}
