// Package sse frames Server-Sent Events: Reader splits a byte stream into
// events with a carried tail and a size cap, and the Append functions write
// events.
package sse

import (
	"bytes"
	"errors"
	"io"

	"slipstream/pool"
)

// ErrTooLarge is returned by Next when one event exceeds the Reader's
// MaxEvent bytes.
var ErrTooLarge = errors.New("sse: event too large")

// DefaultMaxEvent is the event size cap used when Reader.MaxEvent is 0.
const DefaultMaxEvent = 16 << 20

const readSize = 4 << 10 // events are small; one larger than this grows the buffer

// maxData is the largest data scratch (the join of an event's data lines)
// that Release keeps: one event of many large data lines must not pin its
// size in a pooled Reader for the life of the process.
const maxData = 1 << 20

// Event is one framed event. All fields are views into the Reader's buffer,
// valid until the next call to Next or Release.
type Event struct {
	Name []byte // value of the event: field, nil when absent
	// Data is the data: field; several data lines are joined with '\n'.
	Data []byte
	// Raw is the event exactly as it arrived, separator included, for
	// verbatim forwarding.
	Raw []byte
	// Partial is set on the last event of a stream that ended without the
	// blank line that closes an event: it may have been cut short, and
	// forwarding its Raw verbatim would leave the receiver's framing open.
	Partial bool
}

// IsComment reports whether e carried neither a name nor data (only
// comments such as ": ping", or id:/retry: fields).
func (e *Event) IsComment() bool { return e.Name == nil && e.Data == nil }

// IsKeepAlive reports whether e only keeps a connection open: a comment,
// an event without data, or one named ping (Anthropic's keep-alive). Such
// events say nothing about the stream's progress.
func (e *Event) IsKeepAlive() bool { return len(e.Data) == 0 || string(e.Name) == "ping" }

// Reader reads events from an underlying stream. The zero value is not
// usable; call Reset. A Reader keeps one pooled buffer that grows only to
// hold an event larger than it, and goes back to the pool on Release. It
// does not keep it while it waits for the stream with every byte read
// (wait): a live stream between two events holds no buffer.
type Reader struct {
	// MaxEvent caps the size of one event; 0 means DefaultMaxEvent.
	MaxEvent int

	r          io.Reader
	buf        *pool.Buffer
	start, end int // unread bytes are buf.B[start:end]
	// scan and line carry the framing scan across reads, so an event that
	// arrives in many reads is scanned once (linear, not quadratic, in its
	// size): buf.B[start:scan] holds no event end, and line is where the
	// line being scanned starts. Both are absolute indexes into buf.B.
	scan, line int
	// ready is the index just past a complete buffered event that Ready
	// found and Next has not returned yet, or 0.
	ready   int
	scanned int // bytes examined by the framing scan; tests read it
	data    []byte
	err     error
	first   [1]byte // wait's read
}

// Reset makes the reader read from r, keeping its buffer.
func (rd *Reader) Reset(r io.Reader) {
	rd.r = r
	rd.start, rd.end = 0, 0
	rd.scan, rd.line, rd.ready = 0, 0, 0
	rd.err = nil
	rd.data = rd.data[:0]
	if rd.buf == nil {
		rd.buf = pool.Get(readSize)
	}
	rd.buf.B = rd.buf.B[:cap(rd.buf.B)]
}

// Release returns the reader's buffer to the pool and drops r. It keeps
// the data scratch only up to maxData bytes.
func (rd *Reader) Release() {
	pool.Put(rd.buf)
	rd.buf = nil
	rd.r = nil
	rd.data = trimData(rd.data)
}

// trimData returns b emptied, or nil when it holds more than maxData.
func trimData(b []byte) []byte {
	if cap(b) > maxData {
		return nil
	}
	return b[:0]
}

// Buffered returns the unread bytes held by the reader.
func (rd *Reader) Buffered() int { return rd.end - rd.start }

// Next returns the next event that carries a name, data, or only comments.
// At the end of the stream it returns io.EOF; a stream that ends inside an
// event yields that event first (the caller decides whether it is
// complete), then io.EOF. Other errors come from the underlying reader.
func (rd *Reader) Next() (Event, error) {
	for {
		if end := rd.nextEnd(); end > 0 {
			raw := rd.buf.B[rd.start:end]
			rd.start, rd.scan, rd.line, rd.ready = end, end, end, 0
			return rd.parse(raw), nil
		}
		if rd.err != nil {
			return rd.tail()
		}
		if err := rd.fill(); err != nil {
			return Event{}, err
		}
	}
}

// Ready reports whether a whole event is buffered, so that Next returns
// it without reading from the underlying stream. A relay that writes each
// event as Next returns it flushes only when the next one is not Ready:
// events that arrived together leave together, and none waits on a read.
// The scan it does is the one Next would do; nothing is examined twice.
func (rd *Reader) Ready() bool { return rd.nextEnd() > 0 }

// nextEnd is eventEnd, remembered until Next consumes the event.
func (rd *Reader) nextEnd() int {
	if rd.ready == 0 {
		rd.ready = rd.eventEnd()
	}
	return rd.ready
}

// tail returns what is left after the stream ended: a last event without
// its blank line, or the read error.
func (rd *Reader) tail() (Event, error) {
	rest := rd.buf.B[rd.start:rd.end]
	rd.start, rd.scan, rd.line = rd.end, rd.end, rd.end
	if len(bytes.TrimSpace(rest)) == 0 {
		return Event{}, rd.err
	}
	ev := rd.parse(rest)
	ev.Partial = !endsBlank(rest)
	return ev, nil
}

// endsBlank reports whether b ends with an empty line, the end of the
// stream ending the last line: only an event whose closing "\r" came last
// ("data: x\r\r", where a "\n" might have followed) reaches tail so.
func endsBlank(b []byte) bool {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		b = b[:len(b)-2]
	case len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r'):
		b = b[:len(b)-1]
	default:
		return false
	}
	return len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r')
}

// fill reads more bytes, compacting or growing the buffer first. With no
// unread byte left it waits for the next one without the buffer.
func (rd *Reader) fill() error {
	if rd.start == rd.end {
		rd.wait()
		return nil
	}
	if rd.start > 0 && rd.end == len(rd.buf.B) {
		rd.end = copy(rd.buf.B, rd.buf.B[rd.start:rd.end])
		rd.rebase()
	}
	if rd.end == len(rd.buf.B) {
		if err := rd.grow(); err != nil {
			return err
		}
	}
	n, err := rd.r.Read(rd.buf.B[rd.end:])
	rd.end += n
	if err != nil {
		rd.err = err
	}
	return nil
}

// wait gives the drained buffer back, reads one byte, and takes a buffer
// again for it and what follows. A stream whose next event has not come
// (a paced upstream, a long think) blocks in that read holding no buffer;
// one whose bytes are already there pays a one-byte read and a pool round
// trip. A grown buffer goes back too: the next event starts small.
func (rd *Reader) wait() {
	pool.Put(rd.buf)
	rd.buf = nil
	n, err := rd.r.Read(rd.first[:])
	rd.buf = pool.Get(readSize)
	rd.buf.B = rd.buf.B[:cap(rd.buf.B)]
	rd.start, rd.scan, rd.line, rd.ready = 0, 0, 0, 0
	rd.end = copy(rd.buf.B, rd.first[:n])
	if err != nil {
		rd.err = err
	}
}

// grow doubles the buffer for one oversized event, up to MaxEvent.
func (rd *Reader) grow() error {
	maxEvent := rd.MaxEvent
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	if rd.end-rd.start >= maxEvent {
		return ErrTooLarge
	}
	nb := pool.Get(min(2*len(rd.buf.B), maxEvent+readSize))
	nb.B = nb.B[:cap(nb.B)]
	rd.end = copy(nb.B, rd.buf.B[rd.start:rd.end])
	rd.rebase()
	pool.Put(rd.buf)
	rd.buf = nb
	return nil
}

// rebase moves the scan state after the unread bytes moved to the front
// of the buffer.
func (rd *Reader) rebase() {
	rd.scan -= rd.start
	rd.line -= rd.start
	rd.start = 0
}

// eventEnd returns the index in buf.B just past the first complete event
// (through its blank line) in the unread bytes, or 0. Lines end in "\n",
// "\r\n" or "\r". It resumes where the previous call stopped, so each byte
// is examined about once however many reads an event takes.
func (rd *Reader) eventEnd() int {
	b := rd.buf.B[:rd.end]
	i, line := rd.scan, rd.line
	rd.scanned += len(b) - i
	nl := -1 // the first '\n' at or after i, len(b) when there is none
	for i < len(b) {
		if nl < i {
			nl = indexFrom(b, i, '\n')
		}
		eol := nl
		if r := bytes.IndexByte(b[i:nl], '\r'); r >= 0 {
			eol = i + r
		}
		if eol == len(b) {
			i = len(b)
			break
		}
		i = eol + 1
		if b[eol] == '\r' {
			if i == len(b) {
				i = eol
				break // a "\n" may follow; look again after the next read
			}
			if b[i] == '\n' {
				i++
			}
		}
		if eol == line {
			return i
		}
		line = i
	}
	rd.scan, rd.line = i, line
	return 0
}

// indexFrom returns the index of the first c in b at or after i, or len(b).
func indexFrom(b []byte, i int, c byte) int {
	if n := bytes.IndexByte(b[i:], c); n >= 0 {
		return i + n
	}
	return len(b)
}

// IndexEOL returns the index of the first line terminator in b ("\r" or
// "\n"), or -1. It is two memchr scans, where bytes.IndexAny looks at one
// byte at a time.
func IndexEOL(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	head := b
	if lf >= 0 {
		head = b[:lf]
	}
	if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// parse reads the fields of one raw event.
func (rd *Reader) parse(raw []byte) Event {
	ev := Event{Raw: raw}
	multi := false
	for rest := raw; len(rest) > 0; {
		line := rest
		if i := IndexEOL(rest); i >= 0 {
			line = rest[:i]
			rest = skipEOL(rest[i:])
		} else {
			rest = nil
		}
		name, value := splitField(line)
		switch string(name) {
		case "event":
			ev.Name = value
		case "data":
			ev.Data, multi = rd.addData(ev.Data, value, multi)
		}
	}
	return ev
}

func (rd *Reader) addData(cur, value []byte, multi bool) ([]byte, bool) {
	if cur == nil {
		if value == nil {
			value = []byte{}
		}
		return value, false
	}
	if !multi {
		rd.data = append(rd.data[:0], cur...)
	}
	rd.data = append(rd.data, '\n')
	rd.data = append(rd.data, value...)
	return rd.data, true
}

func skipEOL(b []byte) []byte {
	if len(b) > 1 && b[0] == '\r' && b[1] == '\n' {
		return b[2:]
	}
	return b[1:]
}

// splitField splits "name: value" (one optional space after the colon).
// A comment line (leading colon) has an empty name.
func splitField(line []byte) (name, value []byte) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return line, line[len(line):]
	}
	value = line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return line[:i], value
}
