package gemini

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// Tail watches a Gemini stream that is relayed verbatim (the same-dialect
// path). Gemini streams have no terminal event: a stream is complete when
// an event carried a finishReason, or ended with an error payload.
type Tail struct{ done bool }

// Reset prepares t for a new stream.
func (t *Tail) Reset() { t.done = false }

// Observe notes one relayed event.
func (t *Tail) Observe(_, data []byte) {
	if bytes.Contains(data, []byte(`"finishReason"`)) || bytes.HasPrefix(data, []byte(`{"error"`)) {
		t.done = true
	}
}

// Done reports whether the stream is complete.
func (t *Tail) Done() bool { return t.done }

// AppendError appends a data event holding the error object.
func (t *Tail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "")
	dst = AppendErrorObject(dst, e)
	return sse.AppendEventEnd(dst)
}
