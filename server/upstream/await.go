package upstream

import (
	"errors"
	"net"
	"os"
	"time"
)

// Await makes the wait for the response head of a call tick: a, what
// Response.LocalAddr returned for it, is read in the goroutine running Do
// while the request is being written (the body's Read or WriteTo, as for
// Interrupt). Until the first byte of the head arrives, a read that has
// waited until due runs tick, on that goroutine, and waits on until the
// time tick returns (a zero time: it waits on without ticking again).
// The caller's own deadline (the first-byte timeout) still ends the wait.
// This is how a streamed request sends its client keep-alive pings while
// its call waits, with no goroutine beside the call. The ticking ends
// with the head's first byte, or with the read's failure. It does nothing
// for an address that is not one of slipstream's connections.
//
// Await sets no deadline itself: fasthttp sets the read deadline after the
// request is written, and SetReadDeadline sets the earlier of the two
// there, a few frames up from the read. (A deadline update runs deep in
// the runtime; made from the read it took a call's goroutine past its
// 8 KiB stack, one stack copy and 8 KiB more per live stream.)
func Await(a net.Addr, due time.Time, tick func() time.Time) {
	ca, ok := a.(*connAddr)
	if !ok || ca == nil || ca.c == nil {
		return
	}
	ca.c.due, ca.c.tick = due, tick
}

// armed is the read deadline to set: the caller's, or the next tick's
// when that is earlier.
func (c *conn) armed() time.Time {
	if c.tick != nil && !c.due.IsZero() && (c.deadline.IsZero() || c.due.Before(c.deadline)) {
		return c.due
	}
	return c.deadline
}

// readAwaiting reads under the armed deadline. A read that runs into a
// tick runs it and reads again; one that ends otherwise ends the ticking.
func (c *conn) readAwaiting(p []byte) (int, error) {
	for {
		if dl := c.armed(); !dl.Equal(c.set) {
			if err := c.setDeadline(dl); err != nil {
				return 0, err
			}
		}
		n, err := c.Conn.Read(p)
		if n > 0 || err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || c.set.Equal(c.deadline) {
			c.due, c.tick = time.Time{}, nil
			if n > 0 && c.idle <= 0 && !c.set.Equal(c.deadline) {
				_ = c.setDeadline(c.deadline) // no idle clock will move it on
			}
			return n, err
		}
		c.due = c.tick()
	}
}
