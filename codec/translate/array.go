package translate

import "slipstream/codec/gemini"

// ArrayStream frames a stream as one JSON array instead of SSE events:
// the form Google serves on :streamGenerateContent without alt=sse, so
// only Gemini streams take it (gemini.ArrayStream does the framing). It
// owns its output buffer, so its holder (a pooled request) needs no
// scratch of its own for it. The zero value is ready.
type ArrayStream struct {
	arr gemini.ArrayStream
	out []byte
}

// maxArrayOut is the largest output buffer Reset keeps; one large event
// must not pin its size for the life of a pooled holder.
const maxArrayOut = 1 << 20

// Frame returns the array bytes for the SSE bytes b (possibly none yet:
// an event not yet ended is kept until it is), valid until the next call.
func (a *ArrayStream) Frame(b []byte) []byte {
	a.out = a.arr.AppendSSE(a.out[:0], b)
	return a.out
}

// Close returns the array's end, valid until the next call; after it the
// bytes written form one well-formed JSON array.
func (a *ArrayStream) Close() []byte {
	a.out = a.arr.AppendClose(a.out[:0])
	return a.out
}

// Reset readies a for the next stream, dropping an oversized buffer.
func (a *ArrayStream) Reset() {
	a.arr.Reset()
	if cap(a.out) > maxArrayOut {
		a.out = nil
	}
	a.out = a.out[:0]
}
