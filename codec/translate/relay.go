package translate

import (
	"slipstream/codec"
	"slipstream/codec/sse"
)

// ValidRelayed reports whether ev, one event of an upstream stream of
// dialect d, may be relayed verbatim to a client of the same dialect
// (sse.Verbatim, with the dialect's non-JSON terminal data: Chat's
// [DONE]). A dialect without a row has no such data.
func ValidRelayed(d codec.Dialect, ev *sse.Event) bool {
	var sentinel []byte
	if r := row(d); r != nil {
		sentinel = r.sentinel
	}
	return sse.Verbatim(ev, sentinel)
}

// done is the data of Chat's last event.
var done = []byte("[DONE]")
