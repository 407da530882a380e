package anthropic

import (
	"slipstream/codec"
	"slipstream/codec/sse"
)

// Tail watches an Anthropic stream that is relayed verbatim (the
// same-dialect path): it notes the terminal event so that a stream that
// ends without one can be closed with an in-band error, and reads the
// usage that message_start and message_delta carry. It parses only those
// two events; every other event costs a look at its name.
type Tail struct {
	done  bool
	usage counts
}

// Reset prepares t for a new stream.
func (t *Tail) Reset() { t.done, t.usage = false, counts{} }

// Observe notes one relayed event.
func (t *Tail) Observe(name, data []byte) {
	switch string(name) {
	case "message_stop", "error":
		t.done = true
	case "message_start":
		t.usage.read(codec.Member(codec.Member(data, "message"), "usage"))
	case "message_delta":
		t.usage.read(codec.Member(data, "usage"))
	}
}

// Done reports whether the terminal event (message_stop or error) passed.
func (t *Tail) Done() bool { return t.done }

// Usage returns the usage the stream reported so far (Known false if none).
func (t *Tail) Usage() codec.Usage { return t.usage.usage() }

// Text returns nothing: Anthropic streams always carry usage, so their
// text is never counted locally.
func (t *Tail) Text() []byte { return nil }

// AppendError appends an in-band error event ending the stream.
func (t *Tail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "error")
	dst = AppendErrorObject(dst, e)
	return sse.AppendEventEnd(dst)
}

// ReadUsage reads an Anthropic usage object (the "usage" member of a
// Messages response) into the neutral Usage.
func ReadUsage(obj []byte) codec.Usage {
	var c counts
	c.read(obj)
	return c.usage()
}

// counts are Anthropic's usage fields as last reported; message_delta
// updates only the fields it carries.
type counts struct {
	in, cacheWrite, cacheRead, out, thinking int64
	cacheWrite1h                             int64 // the part of cacheWrite for one hour
	known                                    bool
}

// read updates c from the raw usage object u in one pass over it; a count
// that is absent or not a number keeps its value.
func (c *counts) read(u []byte) {
	if !codec.IsObject(u) {
		return
	}
	c.known = true
	m := codec.ObjectMembers(u)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "input_tokens":
			setRawCount(&c.in, v)
		case "cache_creation_input_tokens":
			setRawCount(&c.cacheWrite, v)
		case "cache_creation":
			setRawCount(&c.cacheWrite1h, codec.Member(v, "ephemeral_1h_input_tokens"))
		case "cache_read_input_tokens":
			setRawCount(&c.cacheRead, v)
		case "output_tokens":
			setRawCount(&c.out, v)
		case "output_tokens_details":
			setRawCount(&c.thinking, codec.Member(v, "thinking_tokens"))
		}
	}
}

// setRawCount sets *dst to the raw JSON number v; anything else leaves it.
func setRawCount(dst *int64, v []byte) {
	if len(v) > 0 && (v[0] == '-' || '0' <= v[0] && v[0] <= '9') {
		*dst = codec.IntValue(v)
	}
}

// usage returns the neutral usage: Input counts the cached and
// cache-written tokens too, as the decoder's does.
func (c *counts) usage() codec.Usage {
	if !c.known {
		return codec.Usage{}
	}
	return codec.Usage{Input: c.in + c.cacheWrite + c.cacheRead, CacheRead: c.cacheRead,
		CacheWrite: c.cacheWrite, CacheWrite1h: min(c.cacheWrite1h, c.cacheWrite),
		Output: c.out, Reasoning: c.thinking, Known: true}
}
