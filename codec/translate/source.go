package translate

import "slipstream/codec"

// AppendEvents encodes Events that come from a local source rather than an
// upstream body (the mock provider's answer) and appends the client's
// bytes to dst. evs are only read during the call. Acquire the Stream with
// the client dialect as both client and upstream.
func (s *Stream) AppendEvents(dst []byte, evs []codec.Event) []byte {
	if s.enc == nil {
		return dst
	}
	return s.emitEvents(dst, evs)
}
