package sse

import (
	"bytes"
	"unicode/utf8"

	"slipstream/codec"
)

// Verbatim reports whether ev, one event of an upstream stream, may be
// relayed verbatim: its data is one JSON object, valid strictly (escapes
// and UTF-8 in strings too; one pass), or equals sentinel, the non-JSON
// data the dialect ends with (Chat's [DONE]; nil when it has none); its
// name is a plain token; its raw bytes hold nothing but those fields,
// id:/retry: and comments. An event of comments only (a keep-alive)
// passes when every line is valid UTF-8.
//
// Bytes an upstream got wrong (noise, a cut, a proxy's page) would reach
// the client's parser as they are: a relay ends the stream with the
// dialect's error event instead of writing an event that fails.
func Verbatim(ev *Event, sentinel []byte) bool {
	if ev.Data == nil {
		return ev.Name == nil && validLines(ev.Raw)
	}
	if ev.Name != nil && !validName(ev.Name) {
		return false
	}
	if sentinel != nil && bytes.Equal(ev.Data, sentinel) {
		// the terminal of a stream, not JSON
	} else if !codec.ValidTop(ev.Data, nil, nil) {
		return false
	}
	return canonical(ev) || validLines(ev.Raw)
}

// validName reports whether an event name is a non-empty run of letters,
// digits and "._-" (every name the four dialects use).
func validName(b []byte) bool {
	if len(b) == 0 || len(b) > 128 {
		return false
	}
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// canonical reports whether ev.Raw is exactly its fields as providers
// write them, "event: NAME\n" (when named) then "data: DATA" and a blank
// line ("\n\n", "\r\n\r\n" or "\r\r"): the fast path, which looks at the
// few bytes around the data only.
func canonical(ev *Event) bool {
	raw := ev.Raw
	if ev.Name != nil {
		if !bytes.HasPrefix(raw, prefixEvent) {
			return false
		}
		raw = raw[len(prefixEvent):]
		if len(raw) < len(ev.Name) || &raw[0] != &ev.Name[0] {
			return false
		}
		raw = skipOneEOL(raw[len(ev.Name):])
		if raw == nil {
			return false
		}
	}
	if !bytes.HasPrefix(raw, prefixData) {
		return false
	}
	raw = raw[len(prefixData):]
	if len(ev.Data) == 0 || len(raw) < len(ev.Data) || &raw[0] != &ev.Data[0] {
		return false // several data lines, or an empty one
	}
	switch rest := raw[len(ev.Data):]; string(rest) {
	case "\n\n", "\r\n\r\n", "\r\r":
		return true
	}
	return false
}

var (
	prefixEvent = []byte("event: ")
	prefixData  = []byte("data: ")
)

// skipOneEOL returns b after its leading line end, or nil when b does not
// start with one.
func skipOneEOL(b []byte) []byte {
	switch {
	case len(b) >= 2 && b[0] == '\r' && b[1] == '\n':
		return b[2:]
	case len(b) >= 1 && (b[0] == '\n' || b[0] == '\r'):
		return b[1:]
	}
	return nil
}

// validLines is the slow path of Verbatim: every line of raw is
// valid UTF-8 without control bytes, and blank, a comment, or one of the
// fields event, data, id and retry.
func validLines(raw []byte) bool {
	for len(raw) > 0 {
		line := raw
		if i := IndexEOL(raw); i >= 0 {
			line, raw = raw[:i], skipOneEOL(raw[i:])
		} else {
			raw = nil
		}
		if !utf8.Valid(line) || hasControl(line) {
			return false
		}
		name := line
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name = line[:i]
		}
		switch string(name) {
		case "", "event", "data", "id", "retry":
		default:
			return false
		}
	}
	return true
}

// hasControl reports whether b holds an ASCII control byte other than tab.
func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}
