package upstream

import "net"

// Interrupt closes the upstream connection a call is using, so that a Do
// waiting for response headers (or a body read) returns an error at once
// and the connection is never pooled again: how slipstream stops a
// provider working for a client that has gone. a is what
// Response.LocalAddr returned for that call, read in the goroutine
// running Do once fasthttp has taken the connection (while the request is
// being written, e.g. from the body's Read or WriteTo). Interrupt is safe
// from any goroutine and idempotent; it returns false when a is not one
// of slipstream's upstream connections (nil before a connection was
// taken). An interrupted call is never Stale, so it is not sent again.
func Interrupt(a net.Addr) bool {
	ca, ok := a.(*connAddr)
	if !ok || ca == nil || ca.c == nil {
		return false
	}
	ca.c.interrupted.Store(true)
	_ = ca.c.raw.Close() // the TCP connection, under TLS if any: unblocks every read and write
	return true
}
