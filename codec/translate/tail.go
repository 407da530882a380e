package translate

import (
	"slipstream/codec"
	"slipstream/codec/anthropic"
	"slipstream/codec/gemini"
	"slipstream/codec/openai"
)

// Tail watches a stream relayed verbatim (client and upstream speak the
// same dialect): it notes the dialect's terminal event, reads the usage
// as it passes, and writes the in-band error that ends a stream cut
// short. The dialect packages implement it (anthropic.Tail,
// openai.ChatTail, openai.ResponsesTail, gemini.Tail); Tails.For picks one.
type Tail interface {
	// Reset prepares the tail for a new stream.
	Reset()
	// Observe notes one relayed event (name and data are borrowed for
	// the call only).
	Observe(name, data []byte)
	// Done reports whether the stream's terminal event passed.
	Done() bool
	// Usage returns the usage the stream reported (Known false if none).
	Usage() codec.Usage
	// Text returns the output text to count locally when the dialect may
	// report no usage (valid until the next Observe), or nil.
	Text() []byte
	// AppendError appends the in-band error event ending the stream.
	AppendError(dst []byte, e *codec.Error) []byte
}

var (
	_ Tail = (*anthropic.Tail)(nil)
	_ Tail = (*openai.ChatTail)(nil)
	_ Tail = (*openai.ResponsesTail)(nil)
	_ Tail = (*gemini.Tail)(nil)
)

// Tails holds one Tail per dialect, so that its owner (a pooled request)
// picks the one its stream needs without allocating. The zero value is
// ready.
type Tails struct {
	anthropic anthropic.Tail
	chat      openai.ChatTail
	responses openai.ResponsesTail
	gemini    gemini.Tail
}

// For returns the tail of dialect d, reset for a new stream; a dialect
// without a row gets Chat's. model (the client-facing model, escaped
// string content) and created (Unix seconds) are what a Responses tail's
// own response.created carries; they are copied. The Tail is t's until
// the next For.
func (t *Tails) For(d codec.Dialect, model []byte, created int64) Tail {
	r := row(d)
	if r == nil || r.tail == nil {
		r = row(codec.DialectChat)
	}
	return r.tail(t, model, created)
}

// The table's tail rows.

func anthropicTail(t *Tails, _ []byte, _ int64) Tail {
	t.anthropic.Reset()
	return &t.anthropic
}

func chatTail(t *Tails, _ []byte, _ int64) Tail {
	t.chat.Reset()
	return &t.chat
}

func responsesTail(t *Tails, model []byte, created int64) Tail {
	t.responses.Reset()
	t.responses.Begin(model, created)
	return &t.responses
}

func geminiTail(t *Tails, _ []byte, _ int64) Tail {
	t.gemini.Reset()
	return &t.gemini
}
