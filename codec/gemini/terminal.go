package gemini

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// Tail watches a Gemini stream that is relayed verbatim (the same-dialect
// path). Gemini streams have no terminal event: a stream is complete when
// an event carried a finishReason, or ended with an error payload. Each
// chunk's usageMetadata replaces the last (the latest is authoritative).
type Tail struct {
	done  bool
	usage codec.Usage
}

// Reset prepares t for a new stream.
func (t *Tail) Reset() { t.done, t.usage = false, codec.Usage{} }

// Observe notes one relayed event.
func (t *Tail) Observe(_, data []byte) {
	if bytes.Contains(data, []byte(`"finishReason"`)) || bytes.HasPrefix(data, []byte(`{"error"`)) {
		t.done = true
	}
	if bytes.Contains(data, []byte(`"usageMetadata"`)) {
		if v := codec.Member(data, "usageMetadata"); codec.IsObject(v) {
			t.usage = readUsage(v)
		}
	}
}

// Done reports whether the stream is complete.
func (t *Tail) Done() bool { return t.done }

// Usage returns the latest usageMetadata seen (Known false if none).
func (t *Tail) Usage() codec.Usage { return t.usage }

// Text returns nothing: Gemini reports usageMetadata in its chunks, so
// its text is not counted locally.
func (t *Tail) Text() []byte { return nil }

// ReadUsage reads a Gemini usageMetadata object into the neutral Usage.
func ReadUsage(obj []byte) codec.Usage {
	if !codec.IsObject(obj) {
		return codec.Usage{}
	}
	return readUsage(obj)
}

// AppendError appends a data event holding the error object.
func (t *Tail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "")
	dst = AppendErrorObject(dst, e)
	return sse.AppendEventEnd(dst)
}
