package ws

import (
	"encoding/binary"
	"errors"
	"time"
)

// Control frames are written here, each in one socket write: a write is
// atomic with respect to a turn's data frames (conn.flush) and to the
// control frames other goroutines write (pings, pongs, close replies),
// so frames never interleave.

// Close codes the server sends (RFC 6455 section 7.4.1).
const (
	closeGoingAway      = 1001
	closeProtocolError  = 1002
	closeNoStatus       = 1005 // never sent: a close frame without a code
	closeInvalidPayload = 1007
	closePolicy         = 1008
	closeTooBig         = 1009
	closeInternalError  = 1011
	closeTryAgain       = 1013 // try again later
)

// errCloseSent refuses a control frame after the close frame.
var errCloseSent = errors.New("websocket: close frame already sent")

// writeControl writes control frame op with payload p (at most 125
// bytes), giving the client d to take it. Control frames go out one at a
// time, and none after the close frame: a ping racing a close cannot
// follow it.
func (c *conn) writeControl(op byte, p []byte, d time.Duration) error {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	if c.closeSent {
		return errCloseSent
	}
	c.closeSent = op == opClose
	var f [2 + 125]byte
	f[0], f[1] = 0x80|op, byte(len(p)) // FIN; a server frame is not masked
	n := 2 + copy(f[2:], p)
	_ = c.nc.SetWriteDeadline(time.Now().Add(d))
	_, err := c.nc.Write(f[:n])
	return err
}

// closeFrame makes a close frame's payload: code, then as much of reason
// as fits.
func closeFrame(dst []byte, code int, reason string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	return append(dst, reason[:min(len(reason), 123)]...)
}

// sendClose writes a close frame with code and reason.
func (c *conn) sendClose(code int, reason string) {
	var p [125]byte
	_ = c.writeControl(opClose, closeFrame(p[:0], code, reason), time.Second)
}
