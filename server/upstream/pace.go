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
		c.paced, c.events, c.seen, c.lastSeen = true, 0, 0, time.Now()
		_ = c.setDeadline(c.lastSeen.Add(c.check()))
	}
}

// Progress records a data event on a paced connection. It only counts:
// the count is looked at every quarter of the idle timeout (readPaced),
// so a flowing stream pays neither a clock read nor a timer update per
// event, and a stream ends at most a quarter of the timeout late.
func Progress(a net.Addr) {
	if c := pacedConn(a); c != nil {
		c.events++
	}
}

func pacedConn(a net.Addr) *conn {
	ca, ok := a.(*connAddr)
	if !ok || ca == nil || ca.c == nil || ca.c.idle <= 0 {
		return nil
	}
	return ca.c
}

// check is how often a paced connection looks at its data event count.
func (c *conn) check() time.Duration { return c.idle / 4 }

// readPaced reads under a deadline a quarter of the idle timeout ahead.
// A read that runs into it looks at the data event count: when events
// came since the last look, the stream is alive and lastSeen moves to
// now; when none came for idle, the read fails with the timeout;
// otherwise the deadline moves on and the read goes on.
func (c *conn) readPaced(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.answered = true
		}
		if n > 0 || err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		now := time.Now()
		if c.events != c.seen {
			c.seen, c.lastSeen = c.events, now
		}
		end := c.lastSeen.Add(c.idle)
		if !now.Before(end) {
			return n, err // no data event for idle
		}
		if err := c.setDeadline(earliest(now.Add(c.check()), end)); err != nil {
			return 0, err
		}
	}
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
