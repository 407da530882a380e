package upstream

import (
	"errors"
	"net"
	"os"
	"time"
)

// Pace makes timeouts.idle count data events, not bytes, on the
// connection of a call whose event stream the caller relays: a, what
// Response.LocalAddr returned for it. Keep-alive comments reset no clock
// from now on, so a stream that sends only them for idle fails with a
// timeout like a silent one; the caller reports each data event with
// Progress. The idle clock starts now. Pace and Progress are called from
// the goroutine that reads the body; they do nothing for an address that
// is not one of slipstream's connections (a mock) or without an idle
// timeout. The pacing ends with the response: the connection's next
// request (or read deadline set by fasthttp) reads bytes as activity again.
func Pace(a net.Addr) {
	if c := pacedConn(a); c != nil {
		c.paced, c.lastData = true, time.Now()
		_ = c.Conn.SetReadDeadline(c.lastData.Add(c.idle))
	}
}

// Progress records a data event on a paced connection: the stream may
// stay silent for idle from now. It costs a clock read; the deadline
// itself moves only when a read runs into it (readPaced).
func Progress(a net.Addr) {
	if c := pacedConn(a); c != nil && c.paced {
		c.lastData = time.Now()
	}
}

func pacedConn(a net.Addr) *conn {
	ca, ok := a.(*connAddr)
	if !ok || ca == nil || ca.c == nil || ca.c.idle <= 0 {
		return nil
	}
	return ca.c
}

// readPaced reads with the deadline idle after the last data event. The
// deadline is set lazily: a read that runs into a deadline set before the
// latest data event sets the new one and reads again, so a flowing
// stream costs no timer update per read.
func (c *conn) readPaced(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.answered = true
		}
		if n > 0 || err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		end := c.lastData.Add(c.idle)
		if !time.Now().Before(end) {
			return n, err // idle since the last data event
		}
		if err := c.Conn.SetReadDeadline(end); err != nil {
			return 0, err
		}
	}
}
