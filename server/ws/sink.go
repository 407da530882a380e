package ws

import (
	"slipstream/codec"
	"slipstream/codec/sse"
)

// Sink is where the server writes the response of a turn it streams:
// the events of a Responses stream, in order. Each event goes out as one
// text frame holding its data; comments and keep-alives are dropped. The
// byte slices are views valid only during the call. Every method reports
// false once the client is gone.
type Sink interface {
	// Event writes one upstream event relayed as it came: its name (nil
	// for an unnamed event) and data (both nil for a comment); raw, its
	// SSE bytes, is not used by frames.
	Event(name, data, raw []byte) bool
	// Events writes raw, zero or more whole SSE events the server built
	// (a translation, an in-band error); each event's data is sent.
	Events(raw []byte) bool
	// Flush sends what was written.
	Flush() bool
	// Gone is closed when the client has left (or the connection is shut
	// down).
	Gone() <-chan struct{}
	// Checked describes the body the transport built for this turn, or is
	// nil when the server must read the body itself.
	Checked() *Checked
}

// Checked is what the transport knows of the body it built for a turn.
// The body is one JSON object by construction: ParseFrame checked the
// frame's shape and that it names no routed member twice, and every
// transcript item it carries was checked as it entered (a frame's input,
// or output events the server relayed). Routed[i] is where the value of
// codec.RoutedMembers[i] lies in the body (start, end; zero when absent).
// Tagged is false only when no string in the body can start with an
// origin tag. Size is the body's length, for the server to make sure it
// reads the same bytes.
type Checked struct {
	Routed [len(codec.RoutedMembers)][2]int
	Tagged bool
	Size   int
}

// Stream is a streamed response the Handler prepared and did not run.
// The transport calls Run exactly once, on its own goroutine, with the
// turn's sink (the one the Handler was given), after it sent what the
// response head carries; Run writes the stream to out and releases what
// the response holds.
type Stream interface{ Run(out Sink) }

// turnSink is the Sink of one turn of a connection (conn.sink): it relays
// each event as relayEvent does and learns from them what ends the turn.
type turnSink struct {
	c *conn
	r relayState
}

var _ Sink = (*turnSink)(nil)

func (s *turnSink) Event(name, data, _ []byte) bool {
	if !s.r.done { // nothing goes out after the terminal event
		s.c.relayEvent(&s.r, name, data)
	}
	return s.ok()
}

func (s *turnSink) Events(raw []byte) bool {
	for len(raw) > 0 && !s.r.done {
		ev, rest, ok := sse.NextEvent(raw)
		if !ok { // the last event, without its blank line
			ev, rest = raw, nil
		}
		raw = rest
		name, data := sse.Fields(ev, &s.c.data)
		s.c.relayEvent(&s.r, name, data)
	}
	return s.ok()
}

// Flush fails only when a write fails: with nothing queued it sends
// nothing, as an HTTP flush of an empty buffer does (Event and Events
// report a client seen leaving).
func (s *turnSink) Flush() bool {
	if s.c.flush() != nil {
		s.c.setGone()
		return false
	}
	return true
}

func (s *turnSink) Gone() <-chan struct{} { return s.c.gone }

func (s *turnSink) Checked() *Checked {
	if !s.c.checkedOK {
		return nil
	}
	return &s.c.checked
}

// ok reports whether the client is still there: no write failed and it
// was not seen leaving.
func (s *turnSink) ok() bool {
	if s.c.werr != nil {
		return false
	}
	select {
	case <-s.c.gone:
		return false
	default:
		return true
	}
}
