package ws

import (
	"bytes"

	"slipstream/codec"
)

// frame is one client frame, read in one pass over its top-level members.
// Every field is a view into the frame's bytes, valid while they are.
type frame struct {
	typ      []byte // the "type" string content
	model    []byte // the raw model value
	prev     []byte // the raw previous_response_id value
	prevID   []byte // previous_response_id string content, nil when absent
	input    []byte // the raw input value
	stream   []byte // the raw stream value
	prewarm  bool   // generate:false
	metadata []byte // the raw client_metadata object
}

// frameMembers are the top-level members the transport acts on.
var frameMembers = [...]string{"type", "model", "previous_response_id", "input", "stream", "generate", "client_metadata"}

// frameVals holds a frame's values of frameMembers.
type frameVals = [len(frameMembers)][]byte

// parseFrame checks that b is one complete JSON object, in the one
// forward pass that also finds the members the transport acts on (vals is
// scratch). String content is not checked here: the server checks it in
// the body the frame expands into, which carries every member but those
// the expansion drops (type, generate, previous_response_id, which are
// read here). A member named twice (also up to case or escapes) makes the
// frame invalid: the transport must not act on one value while the
// upstream reads another.
func parseFrame(b []byte, vals *frameVals) (f frame, ok bool) {
	if dup, ok := codec.ValidShapeTop(b, frameMembers[:], vals[:]); !ok || dup >= 0 {
		return f, false
	}
	f.typ = codec.StrContent(vals[0])
	f.model = vals[1]
	f.prev = vals[2]
	f.prevID = codec.StrContent(vals[2])
	f.input = vals[3]
	f.stream = vals[4]
	f.prewarm = string(vals[5]) == "false"
	f.metadata = vals[6]
	return f, true
}

// grows reports whether expanding the frame (it does not chain) writes
// more bytes than it has read at some point: a string input is wrapped
// into a message (45 bytes more), a scalar one becomes [], and a stream
// value shorter than true becomes true. Together they add at most
// maxGrowth bytes before the last member is read; every other member is
// copied as it is or shrinks. (A member named twice is refused before.)
func (f *frame) grows() bool {
	return f.input != nil && f.input[0] != '[' || f.stream != nil && len(f.stream) < len("true")
}

// maxGrowth bounds how far the expansion of a frame that does not chain
// may write ahead of what it has read (see grows).
const maxGrowth = len(`[{"type":"message","role":"user","content":}]`) + len("true")

// expandInPlace expands frame b, a view into buf[:cap(buf)] that leaves
// at least slack bytes after it, into the body within buf, and returns
// the body. A frame that grows is first moved slack bytes to the right,
// so that writing never overtakes reading; what the expansion appends
// after the last member fits in the slack (or append moves the body,
// which is still correct).
func (e *expansion) expandInPlace(buf, b []byte, grows bool) []byte {
	if grows {
		moved := buf[slack : slack+len(b)]
		copy(moved, b)
		b = moved
	}
	return e.appendBody(buf[:0], b, nil, nil)
}

// appendItems appends the elements of a raw JSON array without its
// brackets and surrounding space (nothing for an empty array). A string
// input is one user message; anything else has no items.
func appendItems(dst, input []byte) []byte {
	switch {
	case len(input) >= 2 && input[0] == '[':
		return append(dst, bytes.TrimSpace(input[1:len(input)-1])...)
	case len(input) >= 2 && input[0] == '"':
		dst = append(dst, `{"type":"message","role":"user","content":`...)
		dst = append(dst, input...)
		return append(dst, '}')
	}
	return dst
}

// appendItemList appends items to a comma-separated list.
func appendItemList(dst []byte, list int, items []byte) []byte {
	items = bytes.TrimSpace(items)
	if len(items) == 0 {
		return dst
	}
	if len(dst) > list {
		dst = append(dst, ',')
	}
	return append(dst, items...)
}

// headerOut is a header the frame's client_metadata asks for on the HTTP
// request it becomes: its name, and its value at vals[start:end].
type headerOut struct {
	name       []byte
	start, end int
}

// expansion is the HTTP body one frame becomes, with where its input items
// lie in it.
type expansion struct {
	inStart, inEnd int // the input array's elements (no brackets) in the body
	headers        [maxHeaders]headerOut
	nhdr           int
	scratch        [maxHeaders][64]byte // header names built from metadata keys
	vals           []byte               // header values, unescaped
}

// header returns the i-th header the frame asks for.
func (e *expansion) header(i int) (name, value []byte) {
	h := &e.headers[i]
	return h.name, e.vals[h.start:h.end]
}

const maxHeaders = 8

// appendBody appends the body of an HTTP POST /v1/responses for frame b:
// every member but type, generate and previous_response_id, with
// stream:true, client_metadata without its WebSocket-only keys (those
// naming headers become headers), and input = prev ++ the frame's input
// items. prevIn and prevOut are the stored transcript's input and output
// items, or nil.
func (e *expansion) appendBody(dst, b, prevIn, prevOut []byte) []byte {
	e.nhdr = 0
	e.vals = e.vals[:0]
	dst = append(dst, '{')
	start := len(dst)
	sawInput, sawStream := false, false
	m := codec.ObjectMembers(b)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "type", "generate", "previous_response_id":
			continue
		}
		if len(dst) > start {
			dst = append(dst, ',')
		}
		switch {
		case string(k) == "input" && !sawInput:
			sawInput = true
			dst = e.appendInput(dst, prevIn, prevOut, v)
		case string(k) == "stream" && !sawStream:
			sawStream = true
			dst = append(dst, `"stream":true`...)
		case string(k) == "client_metadata" && codec.IsObject(v):
			dst = append(dst, `"client_metadata":`...)
			dst = e.appendMetadata(dst, v)
		default:
			dst = append(dst, '"')
			dst = append(dst, k...)
			dst = append(dst, `":`...)
			dst = append(dst, v...)
		}
	}
	if !sawInput {
		if len(dst) > start {
			dst = append(dst, ',')
		}
		dst = e.appendInput(dst, prevIn, prevOut, nil)
	}
	if !sawStream {
		if len(dst) > start {
			dst = append(dst, ',')
		}
		dst = append(dst, `"stream":true`...)
	}
	return append(dst, '}')
}

func (e *expansion) appendInput(dst, prevIn, prevOut, input []byte) []byte {
	dst = append(dst, `"input":[`...)
	e.inStart = len(dst)
	dst = appendItemList(dst, e.inStart, prevIn)
	dst = appendItemList(dst, e.inStart, prevOut)
	n := len(dst)
	if n > e.inStart {
		dst = append(dst, ',')
	}
	dst = appendItems(dst, input)
	if len(dst) == n+1 { // a comma and no items
		dst = dst[:n]
	}
	e.inEnd = len(dst)
	return append(dst, ']')
}

const headerKeyPrefix = "ws_request_header_"

// appendMetadata copies client_metadata without the keys that exist only
// on the WebSocket: ws_request_header_<name> becomes the header <name>
// (underscores as dashes), and x-codex-ws-stream-request-start-ms is
// dropped. x-codex-turn-state and x-codex-turn-metadata stay, and are
// also sent as headers, as Codex sends them over HTTP.
func (e *expansion) appendMetadata(dst, obj []byte) []byte {
	dst = append(dst, '{')
	start := len(dst)
	m := codec.ObjectMembers(obj)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		if name, ok := bytes.CutPrefix(k, []byte(headerKeyPrefix)); ok {
			e.addHeader(name, true, v)
			continue
		}
		switch string(k) {
		case "x-codex-ws-stream-request-start-ms":
			continue
		case "x-codex-turn-state", "x-codex-turn-metadata":
			e.addHeader(k, false, v)
		}
		if len(dst) > start {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, `":`...)
		dst = append(dst, v...)
	}
	return append(dst, '}')
}

// addHeader records header name: the string content of v. Names and values
// that are not plain header text (escapes, control bytes) are skipped:
// client bytes reach headers only when they cannot split or forge one.
func (e *expansion) addHeader(name []byte, underscores bool, v []byte) {
	val := codec.StrContent(v)
	if e.nhdr == maxHeaders || len(name) == 0 || len(name) > len(e.scratch[0]) || val == nil {
		return
	}
	start := len(e.vals)
	vals, err := codec.AppendUnescaped(e.vals, val)
	if err != nil || !headerText(vals[start:]) {
		return
	}
	s := e.scratch[e.nhdr][:0]
	for _, c := range name {
		if underscores && c == '_' {
			c = '-'
		}
		if !tokenByte(c) {
			return
		}
		s = append(s, c)
	}
	e.vals = vals
	e.headers[e.nhdr] = headerOut{name: s, start: start, end: len(vals)}
	e.nhdr++
}

func tokenByte(c byte) bool {
	return c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func headerText(v []byte) bool {
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
