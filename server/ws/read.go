package ws

import (
	"encoding/binary"
	"errors"
	"io"
	"time"

	"slipstream/codec/openai"
	"slipstream/pool"
)

// Frames are read here, on the socket: a data frame's header carries its
// payload length, and the payload is admitted against the server's bytes
// in flight (Options.Admit) before a byte of it is read.

// Opcodes (RFC 6455 section 5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
)

// frameHeader is one frame's header.
type frameHeader struct {
	fin  bool
	op   byte
	n    int64 // payload length
	mask [4]byte
}

// errProtocol is a frame that breaks RFC 6455: the connection closes with
// 1002.
var errProtocol = errors.New("websocket protocol error")

// readHeader reads one frame header. A client frame must be masked, use no
// reserved bit (no extension is negotiated) and a known opcode; a control
// frame must be whole and at most 125 bytes.
func (c *conn) readHeader() (h frameHeader, err error) {
	b := c.hb[:2]
	if _, err = io.ReadFull(c.nc, b); err != nil {
		return h, err
	}
	h.fin, h.op = b[0]&0x80 != 0, b[0]&0x0f
	n, masked := int64(b[1]&0x7f), b[1]&0x80 != 0
	if b[0]&0x70 != 0 || !masked || !knownOp(h.op) {
		return h, errProtocol
	}
	ext := 0
	switch n {
	case 126:
		ext = 2
	case 127:
		ext = 8
	}
	b = c.hb[:ext+4]
	if _, err = io.ReadFull(c.nc, b); err != nil {
		return h, err
	}
	switch ext {
	case 2:
		n = int64(binary.BigEndian.Uint16(b))
	case 8:
		u := binary.BigEndian.Uint64(b)
		if u>>63 != 0 {
			return h, errProtocol
		}
		n = int64(u)
	}
	h.n = n
	copy(h.mask[:], b[ext:])
	if h.op >= opClose && (!h.fin || h.n > 125) {
		return h, errProtocol
	}
	return h, nil
}

func knownOp(op byte) bool {
	switch op {
	case opContinuation, opText, opBinary, opClose, opPing, opPong:
		return true
	}
	return false
}

// unmask applies a frame's masking key to its whole payload b, eight bytes
// at a time.
func unmask(b []byte, key [4]byte) {
	k32 := binary.LittleEndian.Uint32(key[:])
	k64 := uint64(k32) | uint64(k32)<<32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k64)
	}
	for ; i < len(b); i++ {
		b[i] ^= key[i&3]
	}
}

// message is what the reader starts a turn for.
type message byte

const (
	msgText    message = iota // a text message, in c.in
	msgBinary                 // a binary message, in c.in
	msgRefused                // a message refused by Options.Admit, not read
)

// slack is the room a frame buffer has past the payload: a frame whose
// expansion is done in place (see expandInPlace) may grow by this much.
const slack = openai.FrameSlack

// readLoop reads frames until the client leaves, closes or breaks the
// protocol. Control frames are answered at once, also while a turn
// serves a response; a data message is read only when no turn is in
// flight (the reader holds the idle token), and a turn started for it.
func (c *conn) readLoop() {
	for {
		h, err := c.readHeader()
		if err != nil {
			c.readFailed(err)
			return
		}
		if h.op >= opClose {
			if !c.control(h, true) {
				return
			}
			continue
		}
		if h.op == opContinuation {
			c.readFailed(errProtocol) // no message to continue
			return
		}
		select {
		case <-c.idle:
		case <-c.gone:
			return
		}
		m, ok := c.readMessage(h)
		if !ok {
			return
		}
		c.extendRead()
		if m == msgRefused {
			continue // answered already
		}
		select {
		case <-c.gone:
			return
		default:
			c.startTurn(m)
		}
	}
}

// readMessage reads the data message that starts with frame h, its
// continuation frames and the control frames between them. Each frame's
// payload is admitted before it is read. A refused message gets its turn
// at once (which answers it with a 429 error event while the rest
// arrives) and its payload is skipped without being buffered; it is
// reported as msgRefused, already answered. It reports false when the
// connection ends.
func (c *conn) readMessage(h frameHeader) (message, bool) {
	m := msgText
	if h.op == opBinary {
		m = msgBinary
	}
	var total int64
	c.frag = !h.fin
	for {
		if h.n > c.t.cfg().MaxFrame-total { // not total+h.n: it can overflow
			c.tooBig(h)
			return m, false
		}
		total += h.n
		if !c.room(int(h.n)) {
			c.releaseFrame()
			select {
			case <-c.gone:
				return msgRefused, false
			default:
				c.startTurn(msgRefused)
			}
			return msgRefused, c.skipMessage(h, total)
		}
		if !c.payload(h) {
			return m, false
		}
		if h.fin {
			return m, true
		}
		var ok bool
		if h, ok = c.nextFragment(); !ok {
			return m, false
		}
	}
}

// skipMessage reads and drops the payload of frame h and of the rest of
// its message; total is the message's length so far, h included.
func (c *conn) skipMessage(h frameHeader, total int64) bool {
	for {
		if _, err := io.CopyN(io.Discard, c.nc, h.n); err != nil {
			c.readFailed(err)
			return false
		}
		if h.fin {
			return true
		}
		var ok bool
		if h, ok = c.nextFragment(); !ok {
			return false
		}
		if h.n > c.t.cfg().MaxFrame-total {
			c.tooBig(h)
			return false
		}
		total += h.n
	}
}

// nextFragment reads frames up to the next continuation frame, answering
// the control frames before it.
func (c *conn) nextFragment() (frameHeader, bool) {
	for {
		h, err := c.readHeader()
		if err != nil {
			c.readFailed(err)
			return h, false
		}
		if h.op < opClose {
			if h.op != opContinuation {
				c.readFailed(errProtocol)
				return h, false
			}
			return h, true
		}
		if !c.control(h, false) {
			return h, false
		}
	}
}

// room makes room in c.in for a frame of n payload bytes (and slack),
// reserving the bytes of the buffer it takes in the server's bytes in
// flight first (Options.Admit); it reports false, taking nothing, when
// they are refused. The reservation is c.reserved, given back by
// releaseFrame. A message in one frame, the common case, gets a buffer
// of its size; a fragmented one doubles its buffer as it grows (never
// past MaxFrame), so that many small fragments are not copied over and
// over.
func (c *conn) room(n int) bool {
	need := n + slack
	if c.in != nil {
		need += len(c.in.B)
		if need <= cap(c.in.B) {
			return true
		}
		need = max(need, min(2*cap(c.in.B), int(c.t.cfg().MaxFrame)+slack))
	}
	if !c.admit(int64(need) - c.reserved) {
		return false
	}
	nb := pool.Get(need)
	if c.in != nil {
		nb.B = append(nb.B[:0], c.in.B...)
		pool.Put(c.in)
	}
	c.in = nb
	return true
}

// admit reserves n more bytes for the message being read.
func (c *conn) admit(n int64) bool {
	o := c.t.cfg()
	if o.Admit == nil {
		return true
	}
	if !o.Admit(n, c.reserved) {
		return false
	}
	c.reserved += n
	return true
}

// payload reads a data frame's payload onto c.in, which has room for it.
func (c *conn) payload(h frameHeader) bool {
	b := c.in.B
	start := len(b)
	b = b[:start+int(h.n)]
	if _, err := io.ReadFull(c.nc, b[start:]); err != nil {
		c.readFailed(err)
		return false
	}
	unmask(b[start:], h.mask)
	c.in.B = b
	return true
}

// releaseFrame returns the message buffer to the pool and its reservation
// to the server's bytes in flight.
func (c *conn) releaseFrame() {
	pool.Put(c.in)
	c.in = nil
	c.leave()
}

// leave gives back the message's reservation.
func (c *conn) leave() {
	if c.reserved > 0 {
		c.t.cfg().Leave(c.reserved)
		c.reserved = 0
	}
}

// control answers a control frame: a ping with a pong, a pong moves the
// read deadline on when it comes between messages, a close is echoed and
// ends the connection. Inside a message a pong moves nothing: the
// message's buffer is reserved in the server's bytes in flight, and the
// deadline set when the last message ended bounds how long it may take.
// It reports false when the connection ends.
func (c *conn) control(h frameHeader, between bool) bool {
	p := c.ctl[:h.n]
	if _, err := io.ReadFull(c.nc, p); err != nil {
		c.readFailed(err)
		return false
	}
	unmask(p, h.mask)
	switch h.op {
	case opPing:
		if c.writeControl(opPong, p, writeTimeout) != nil {
			return false
		}
	case opPong:
		if between {
			c.extendRead()
		}
	case opClose:
		c.echoClose(p)
		return false
	}
	return true
}

// echoClose answers the client's close frame with the same status code
// (RFC 6455 section 5.5.1), or with 1002 when the frame's payload is one
// byte or its code is one no peer may send (section 7.4).
func (c *conn) echoClose(p []byte) {
	switch {
	case len(p) == 0:
		_ = c.writeControl(opClose, nil, time.Second)
	case len(p) == 1 || !sendableCode(int(binary.BigEndian.Uint16(p))):
		c.sendClose(closeProtocolError, "invalid close code")
	default:
		c.sendClose(int(binary.BigEndian.Uint16(p)), "")
	}
}

// sendableCode reports whether a close frame may carry code: the codes
// RFC 6455 and the IANA registry define for use in a frame (1000-1003,
// 1007-1014) and the ranges for libraries and applications (3000-4999).
// 1004 is reserved, and 1005, 1006 and 1015 stand for what no frame says.
func sendableCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	}
	return code >= 3000 && code <= 4999
}

// readFailed ends the connection after a failed read: a protocol error is
// answered with close 1002 first; a departed client needs nothing.
func (c *conn) readFailed(err error) {
	if err == errProtocol {
		c.closeWith(closeProtocolError, "protocol error")
	}
}

// tooBig answers a message over MaxFrame, whose frame h crossed it, with
// close 1009 (Codex's signal to fall back to HTTP), then reads and drops
// what the client still sends -- the rest of frame h and any fragments of
// the message after it -- until the client closes, for at most 2 s and
// 2 x MaxFrame bytes, so that closing the socket does not reset it before
// the client, which may still be writing its message, has read the close
// frame. Nothing read is kept; the message read so far is released when
// the connection ends.
func (c *conn) tooBig(h frameHeader) {
	c.closeWith(closeTooBig, "message exceeds limits.max_body_bytes")
	_ = c.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, _ = io.CopyN(io.Discard, c.nc, max(h.n, 2*c.t.cfg().MaxFrame))
}
