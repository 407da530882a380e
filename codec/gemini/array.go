package gemini

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// ArrayStream turns a Gemini SSE stream into the other stream form Google
// serves on :streamGenerateContent without alt=sse: one JSON array whose
// elements are the same GenerateContentResponse objects, "[" before the
// first, ",\r\n" before each next, "]" at the end. Every element is
// appended as soon as its event is complete, so the caller can flush it.
//
// The SSE bytes may arrive split anywhere; an event not yet ended is kept
// until the next call. Comments (keep-alive pings) become a newline, which
// JSON allows between tokens, so a waiting client still sees bytes. An
// event whose data is not a valid JSON object (an upstream's bytes are
// hostile) ends the array with an error element: the output is always one
// well-formed JSON array once AppendClose is called.
//
// The zero value is ready; Reset keeps the carry buffer's capacity.
type ArrayStream struct {
	carry  []byte // the start of an event not yet ended
	n      int    // elements written
	broken bool   // an invalid event was replaced by an error; the rest is dropped
	// skipLF: the last call ended on a blank line written as a lone CR,
	// whose LF (CRLF) may open the next call.
	skipLF bool
}

// Reset prepares a for a new stream. A carry buffer grown past 1 MiB by
// one large event is dropped rather than kept for the next stream.
func (a *ArrayStream) Reset() {
	a.carry = a.carry[:0]
	if cap(a.carry) > 1<<20 {
		a.carry = nil
	}
	a.n = 0
	a.broken = false
	a.skipLF = false
}

// maxArrayCarry caps the part of one event kept between calls.
const maxArrayCarry = 16 << 20

// AppendSSE appends the array framing of the SSE bytes p.
func (a *ArrayStream) AppendSSE(dst, p []byte) []byte {
	if a.skipLF && len(p) > 0 {
		a.skipLF = false
		if p[0] == '\n' {
			p = p[1:]
		}
	}
	buf, from := p, 0
	carried := len(a.carry) > 0
	if carried {
		// A blank line may straddle the calls: rescan the last two bytes.
		from = max(0, len(a.carry)-2)
		a.carry = append(a.carry, p...)
		buf = a.carry
	}
	start := 0
	for {
		end, next := eventEnd(buf, max(start, from))
		if end < 0 {
			break
		}
		dst = a.appendEvent(dst, buf[start:end])
		start = next
		a.skipLF = next == len(buf) && buf[next-1] == '\r'
	}
	rest := buf[start:]
	switch {
	case len(rest) > maxArrayCarry:
		a.carry = a.carry[:0]
		dst = a.appendBroken(dst, msgArrayTooLarge)
	case carried:
		a.carry = a.carry[:copy(a.carry, rest)]
	default:
		a.carry = append(a.carry[:0], rest...)
	}
	return dst
}

// AppendClose ends the array; an event never ended is dropped.
func (a *ArrayStream) AppendClose(dst []byte) []byte {
	a.carry = a.carry[:0]
	if a.n == 0 {
		dst = append(dst, '[')
	}
	a.n++
	return append(dst, ']')
}

// AppendError appends e as an error element, after which the stream holds
// nothing more: the in-band error of a stream that failed.
func (a *ArrayStream) AppendError(dst []byte, e *codec.Error) []byte {
	if a.broken {
		return dst
	}
	dst = a.appendSep(dst)
	dst = AppendErrorObject(dst, e)
	a.broken = true
	return dst
}

var (
	msgArrayMalformed = []byte("the upstream sent a malformed event")
	msgArrayTooLarge  = []byte("an upstream event is too large")
)

func (a *ArrayStream) appendBroken(dst, msg []byte) []byte {
	e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: msg}
	return a.AppendError(dst, &e)
}

func (a *ArrayStream) appendSep(dst []byte) []byte {
	if a.n == 0 {
		dst = append(dst, '[')
	} else {
		dst = append(dst, ",\r\n"...)
	}
	a.n++
	return dst
}

// appendEvent appends the element of one whole event (separator excluded).
func (a *ArrayStream) appendEvent(dst, ev []byte) []byte {
	if a.broken {
		return dst
	}
	data, ok := eventData(ev)
	if !ok {
		return append(dst, '\n') // a comment: keep-alive bytes
	}
	if i := codec.SkipWS(data, 0); i >= len(data) || data[i] != '{' || !codec.Valid(data) {
		return a.appendBroken(dst, msgArrayMalformed)
	}
	dst = a.appendSep(dst)
	return append(dst, data...)
}

// eventData returns the value of the event's data line, or ok false when
// it has none. Gemini events have one data line; a second one makes the
// data nil, which is not a JSON object.
func eventData(ev []byte) (data []byte, ok bool) {
	for len(ev) > 0 {
		line, rest := ev, []byte(nil)
		if i := sse.IndexEOL(ev); i >= 0 {
			line, rest = ev[:i], ev[i+1:]
			if ev[i] == '\r' && len(rest) > 0 && rest[0] == '\n' {
				rest = rest[1:]
			}
		}
		ev = rest
		v, isData := bytes.CutPrefix(line, []byte("data:"))
		if !isData {
			continue
		}
		if ok {
			return nil, true
		}
		if len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
		data, ok = v, true
	}
	return data, ok
}

// eventEnd finds the first blank line in b at or after a line ending at
// index from or later: end is where the event's bytes stop (the line
// ending before the blank line) and next is just past the blank line;
// both are -1 when b holds no whole event yet.
func eventEnd(b []byte, from int) (end, next int) {
	for i := from; i < len(b); i++ {
		c := b[i]
		if c != '\n' && c != '\r' {
			continue
		}
		j := i + 1
		if c == '\r' && j < len(b) && b[j] == '\n' {
			j++
		}
		if j < len(b) && (b[j] == '\n' || b[j] == '\r') {
			k := j + 1
			if b[j] == '\r' && k < len(b) && b[k] == '\n' {
				k++
			}
			return i, k
		}
	}
	return -1, -1
}
