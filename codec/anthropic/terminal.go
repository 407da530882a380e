package anthropic

import (
	"slipstream/codec"
	"slipstream/codec/sse"
)

// Tail watches an Anthropic stream that is relayed verbatim (the
// same-dialect path): it notes the terminal event so that a stream that
// ends without one can be closed with an in-band error. It reads only the
// SSE event name.
type Tail struct{ done bool }

// Reset prepares t for a new stream.
func (t *Tail) Reset() { t.done = false }

// Observe notes one relayed event.
func (t *Tail) Observe(name, _ []byte) {
	switch string(name) {
	case "message_stop", "error":
		t.done = true
	}
}

// Done reports whether the terminal event (message_stop or error) passed.
func (t *Tail) Done() bool { return t.done }

// AppendError appends an in-band error event ending the stream.
func (t *Tail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "error")
	dst = AppendErrorObject(dst, e)
	return sse.AppendEventEnd(dst)
}
