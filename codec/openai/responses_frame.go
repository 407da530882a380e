package openai

import (
	"bytes"

	"slipstream/codec"
)

// The Responses WebSocket transport (Codex) sends one text frame
// {"type":"response.create",...} per request; each becomes the body of an
// HTTP POST /v1/responses. Reading a frame and expanding it are pure
// bytes; the transport (server/ws) only moves them.

// Frame is one client frame of the Responses WebSocket transport (a
// response.create frame), read in one pass over its top-level members.
// Every field is a view into the frame's bytes, valid while they are.
type Frame struct {
	Type     []byte // the "type" string content
	Model    []byte // the raw model value
	Prev     []byte // the raw previous_response_id value
	PrevID   []byte // previous_response_id string content, nil when absent
	Input    []byte // the raw input value
	Stream   []byte // the raw stream value
	Prewarm  bool   // generate:false
	Metadata []byte // the raw client_metadata object
	// Tagged is false when no string value in the frame starts with
	// codec.OriginTagPrefix.
	Tagged bool
}

// frameMembers are the top-level members the transport acts on, then the
// rest of codec.RoutedMembers: a frame that names one of them twice is
// refused, so its body names each once.
var frameMembers = [...]string{"type", "model", "previous_response_id", "input", "stream", "generate", "client_metadata", "metadata", "prompt_cache_key"}

// FrameVals holds a frame's values of the members ParseFrame reads
// (scratch the caller owns, so that parsing allocates nothing).
type FrameVals = [len(frameMembers)][]byte

// ParseFrame checks that b is one complete JSON object, in the one
// forward pass that also finds the members the transport acts on (vals is
// scratch). String content is not checked here: the server checks it in
// the body the frame expands into, which carries every member but those
// the expansion drops (type, generate, previous_response_id, which are
// read here). A member named twice (also up to case or escapes) makes the
// frame invalid: the transport must not act on one value while the
// upstream reads another.
func ParseFrame(b []byte, vals *FrameVals) (f Frame, ok bool) {
	dup, tagged, ok := codec.ValidShapeTopTagged(b, frameMembers[:], vals[:])
	if !ok || dup >= 0 {
		return f, false
	}
	f.Tagged = tagged
	f.Type = codec.StrContent(vals[0])
	f.Model = vals[1]
	f.Prev = vals[2]
	f.PrevID = codec.StrContent(vals[2])
	f.Input = vals[3]
	f.Stream = vals[4]
	f.Prewarm = string(vals[5]) == "false"
	f.Metadata = vals[6]
	return f, true
}

// Grows reports whether expanding the frame (it does not chain) writes
// more bytes than it has read at some point: a string input is wrapped
// into a message (45 bytes more), a scalar one becomes [], and a stream
// value shorter than true becomes true. Together they add at most
// MaxFrameGrowth bytes before the last member is read; every other member is
// copied as it is or shrinks. (A member named twice is refused before.)
func (f *Frame) Grows() bool {
	return f.Input != nil && f.Input[0] != '[' || f.Stream != nil && len(f.Stream) < len("true")
}

// MaxFrameGrowth bounds how far the expansion of a frame that does not
// chain may write ahead of what it has read (see Grows).
const MaxFrameGrowth = len(`[{"type":"message","role":"user","content":}]`) + len("true")

// FrameSlack is the room ExpandInPlace needs past a frame in its buffer;
// it exceeds MaxFrameGrowth.
const FrameSlack = 64

// ExpandInPlace expands frame b, a view into buf[:cap(buf)] that leaves
// at least FrameSlack bytes after it, into the body within buf, and returns
// the body. A frame that grows (Grows) is first moved FrameSlack bytes
// to the right,
// so that writing never overtakes reading; what the expansion appends
// after the last member fits in the slack (or append moves the body,
// which is still correct).
func (e *FrameExpansion) ExpandInPlace(buf, b []byte, grows bool) []byte {
	if grows {
		moved := buf[FrameSlack : FrameSlack+len(b)]
		copy(moved, b)
		b = moved
	}
	return e.AppendBody(buf[:0], b, nil, nil)
}

// AppendItems appends the elements of a raw JSON array without its
// brackets and surrounding space (nothing for an empty array). A string
// input is one user message; anything else has no items.
func AppendItems(dst, input []byte) []byte {
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

// AppendItemList appends items to a comma-separated list that starts at
// dst[list] (a comma goes first unless the list is still empty).
func AppendItemList(dst []byte, list int, items []byte) []byte {
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

// FrameExpansion is the HTTP body one frame becomes, with where its input
// items lie in it and the headers the frame asks for. The zero value is
// ready; each AppendBody starts over and reuses its buffers.
type FrameExpansion struct {
	InStart, InEnd int // the input array's elements (no brackets) in the body
	// Routed holds where the value of each of codec.RoutedMembers lies in
	// the body (start, end; both 0 when absent). It is meaningful only
	// when RoutedOK (see noteRouted; otherwise the server reads the body
	// itself).
	Routed   [len(codec.RoutedMembers)][2]int
	RoutedOK bool
	headers  [maxHeaders]headerOut
	nhdr     int
	scratch  [maxHeaders][64]byte // header names built from metadata keys
	vals     []byte               // header values, unescaped
}

// Headers returns how many headers the last expanded frame asks for.
func (e *FrameExpansion) Headers() int { return e.nhdr }

// Header returns the i-th header the frame asks for (views valid until
// the next AppendBody).
func (e *FrameExpansion) Header(i int) (name, value []byte) {
	h := &e.headers[i]
	return h.name, e.vals[h.start:h.end]
}

const maxHeaders = 8

// AppendBody appends the body of an HTTP POST /v1/responses for frame b:
// every member but type, generate and previous_response_id, with
// stream:true, client_metadata without its WebSocket-only keys (those
// naming headers become headers), and input = prev ++ the frame's input
// items. prevIn and prevOut are the stored transcript's input and output
// items, or nil.
func (e *FrameExpansion) AppendBody(dst, b, prevIn, prevOut []byte) []byte {
	e.nhdr = 0
	e.vals = e.vals[:0]
	e.Routed, e.RoutedOK = [len(codec.RoutedMembers)][2]int{}, true
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
			dst = e.appendStream(dst)
		case string(k) == "client_metadata" && codec.IsObject(v):
			dst = append(dst, `"client_metadata":`...)
			dst = e.appendMetadata(dst, v)
		default:
			dst = append(dst, '"')
			dst = append(dst, k...)
			dst = append(dst, `":`...)
			e.noteRouted(k, len(dst), len(v))
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
		dst = e.appendStream(dst)
	}
	return append(dst, '}')
}

// appendStream appends "stream":true, and notes where its value lies.
func (e *FrameExpansion) appendStream(dst []byte) []byte {
	dst = append(dst, `"stream":`...)
	e.noteRouted([]byte("stream"), len(dst), len("true"))
	return append(dst, "true"...)
}

// noteRouted notes that the value of the member named key (raw) is copied
// to the body at [at, at+n), when key is one of codec.RoutedMembers.
// Names are compared as the server's own pass compares them
// (codec.MemberIs). One equal to a routed member's but for case makes
// Routed unusable: beside the "stream" the expansion writes, a "Stream"
// is a member named twice, which that pass refuses. (ParseFrame refused a
// routed member named twice, so the first exact one is the only one.)
func (e *FrameExpansion) noteRouted(key []byte, at, n int) {
	for i, name := range codec.RoutedMembers {
		exact, folded := codec.MemberIs(key, name)
		switch {
		case exact:
			if e.Routed[i] == [2]int{} {
				e.Routed[i] = [2]int{at, at + n}
			}
		case folded:
			e.RoutedOK = false
		}
	}
}

func (e *FrameExpansion) appendInput(dst, prevIn, prevOut, input []byte) []byte {
	dst = append(dst, `"input":[`...)
	e.InStart = len(dst)
	dst = AppendItemList(dst, e.InStart, prevIn)
	dst = AppendItemList(dst, e.InStart, prevOut)
	n := len(dst)
	if n > e.InStart {
		dst = append(dst, ',')
	}
	dst = AppendItems(dst, input)
	if len(dst) == n+1 { // a comma and no items
		dst = dst[:n]
	}
	e.InEnd = len(dst)
	return append(dst, ']')
}

const headerKeyPrefix = "ws_request_header_"

// appendMetadata copies client_metadata without the keys that exist only
// on the WebSocket: ws_request_header_<name> becomes the header <name>
// (underscores as dashes), and x-codex-ws-stream-request-start-ms is
// dropped. x-codex-turn-state and x-codex-turn-metadata stay, and are
// also sent as headers, as Codex sends them over HTTP.
func (e *FrameExpansion) appendMetadata(dst, obj []byte) []byte {
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
func (e *FrameExpansion) addHeader(name []byte, underscores bool, v []byte) {
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
