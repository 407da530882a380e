package ws

import (
	"bytes"
	"net"
	"time"

	"slipstream/pool"
)

// The socket is taken from fasthttp as soon as it is hijacked: fasthttp
// would otherwise hold its read buffer (8 KiB) and the upgrade's request
// context for the life of the connection. The server keeps hijacked
// connections (fasthttp.Server.KeepHijackedConns): fasthttp neither
// closes the socket nor pools the buffer when the hijack handler returns,
// and the connection's end closes the socket (conn.serve).

// takeOver is the hijack handler: it takes the socket and serves it on a
// goroutine of its own, so that fasthttp can reuse the request context
// and leave its read buffer to the collector.
func (c *conn) takeOver(hc net.Conn) {
	c.nc = detach(hc)
	go c.serve()
}

// detach returns the socket under hc, a connection fasthttp hijacked,
// with the bytes fasthttp read ahead of the hijack (a frame the client
// sent in the same packet as its upgrade) to be read first. A connection
// that is not fasthttp's is returned as it is.
func detach(hc net.Conn) net.Conn {
	u, ok := hc.(interface{ UnsafeConn() net.Conn })
	if !ok {
		return hc
	}
	raw := u.UnsafeConn()
	// A read past its deadline returns what fasthttp holds, and reads
	// nothing from the socket: its deadline is checked first.
	_ = raw.SetReadDeadline(time.Unix(1, 0))
	b := pool.Get(4 << 10)
	defer pool.Put(b)
	for {
		if len(b.B) == cap(b.B) {
			b.B = append(b.B, 0)[:len(b.B)]
		}
		n, err := hc.Read(b.B[len(b.B):cap(b.B)])
		b.B = b.B[:len(b.B)+n]
		if n == 0 || err != nil {
			break
		}
	}
	_ = raw.SetReadDeadline(time.Time{})
	if len(b.B) == 0 {
		return raw
	}
	return &aheadConn{Conn: raw, ahead: bytes.Clone(b.B)}
}

// aheadConn is a socket with bytes read from it before, which are read
// first.
type aheadConn struct {
	net.Conn
	ahead []byte
}

func (a *aheadConn) Read(p []byte) (int, error) {
	if len(a.ahead) == 0 {
		return a.Conn.Read(p)
	}
	n := copy(p, a.ahead)
	a.ahead = a.ahead[n:]
	if len(a.ahead) == 0 {
		a.ahead = nil
	}
	return n, nil
}
