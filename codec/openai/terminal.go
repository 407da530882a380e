package openai

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// ChatTail watches a Chat Completions stream that is relayed verbatim (the
// same-dialect path) for its terminal [DONE] or an in-band error.
type ChatTail struct{ done bool }

// Reset prepares t for a new stream.
func (t *ChatTail) Reset() { t.done = false }

// Observe notes one relayed event.
func (t *ChatTail) Observe(_, data []byte) {
	if string(data) == "[DONE]" || bytes.HasPrefix(data, []byte(`{"error"`)) {
		t.done = true
	}
}

// Done reports whether the stream has ended properly.
func (t *ChatTail) Done() bool { return t.done }

// AppendError appends Chat's in-band error: a data event holding the error
// object, and no [DONE] after it.
func (t *ChatTail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "")
	dst = AppendErrorObject(dst, e)
	return sse.AppendEventEnd(dst)
}

// ResponsesTail watches a Responses stream that is relayed verbatim. It
// keeps the last sequence_number and the response id so that its in-band
// error continues the stream's numbering.
type ResponsesTail struct {
	done  bool
	seq   int64
	idBuf [128]byte
	id    []byte
}

// Reset prepares t for a new stream.
func (t *ResponsesTail) Reset() { t.done, t.seq, t.id = false, -1, nil }

// Observe notes one relayed event.
func (t *ResponsesTail) Observe(name, data []byte) {
	switch string(name) {
	case "response.completed", "response.incomplete", "response.failed":
		t.done = true
	case "response.created":
		if id := codec.Content(codec.Get(data, "response.id")); len(id) <= len(t.idBuf) {
			t.id = t.idBuf[:copy(t.idBuf[:], id)]
		}
	}
	if n := codec.Get(data, "sequence_number"); n.Exists() {
		t.seq = n.Int()
	}
}

// Done reports whether a terminal event passed.
func (t *ResponsesTail) Done() bool { return t.done }

// AppendError appends a response.failed event carrying e, numbered after
// the last relayed event.
func (t *ResponsesTail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "response.failed")
	dst = append(dst, `{"type":"response.failed","sequence_number":`...)
	dst = codec.AppendInt(dst, t.seq+1)
	dst = append(dst, `,"response":{"id":`...)
	dst = codec.AppendString(dst, t.id)
	dst = append(dst, `,"object":"response","status":"failed","error":{"code":`...)
	dst = AppendCode(dst, e)
	dst = append(dst, `,"message":`...)
	dst = codec.AppendString(dst, e.Message)
	dst = append(dst, `},"output":[],"usage":null}}`...)
	return sse.AppendEventEnd(dst)
}
