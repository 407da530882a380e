package ws

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// frameConn is the net.Conn of the request context each frame is served
// with. The server handler must never touch the WebSocket's own socket
// (it carries frames, not HTTP), so this one stands in: it reports the
// client's addresses, discards writes, and its Read blocks until the
// WebSocket client is gone (then io.EOF), so a handler that watches its
// connection to notice a departed client sees exactly that. Read honours
// read deadlines.
type frameConn struct {
	local, remote net.Addr
	gone          <-chan struct{}

	mu       sync.Mutex
	deadline time.Time
	kick     chan struct{} // closed when the deadline changes
}

var _ net.Conn = (*frameConn)(nil)

func newFrameConn(c net.Conn, gone <-chan struct{}) *frameConn {
	return &frameConn{local: c.LocalAddr(), remote: c.RemoteAddr(), gone: gone, kick: make(chan struct{})}
}

func (f *frameConn) Read([]byte) (int, error) {
	for {
		f.mu.Lock()
		d, kick := f.deadline, f.kick
		f.mu.Unlock()
		if d.IsZero() {
			select {
			case <-f.gone:
				return 0, io.EOF
			case <-kick:
			}
			continue
		}
		wait := time.Until(d)
		if wait <= 0 {
			return 0, os.ErrDeadlineExceeded
		}
		t := time.NewTimer(wait)
		select {
		case <-f.gone:
			t.Stop()
			return 0, io.EOF
		case <-kick:
		case <-t.C:
		}
		t.Stop()
	}
}

// Gone returns a channel closed when the WebSocket client is gone: a
// handler that watches its client can select on it instead of peeking at
// a socket.
func (f *frameConn) Gone() <-chan struct{} { return f.gone }

func (f *frameConn) Write(b []byte) (int, error) { return len(b), nil }
func (f *frameConn) Close() error                { return nil }
func (f *frameConn) LocalAddr() net.Addr         { return f.local }
func (f *frameConn) RemoteAddr() net.Addr        { return f.remote }

func (f *frameConn) SetDeadline(t time.Time) error { return f.SetReadDeadline(t) }

func (f *frameConn) SetReadDeadline(t time.Time) error {
	f.mu.Lock()
	f.deadline = t
	close(f.kick)
	f.kick = make(chan struct{})
	f.mu.Unlock()
	return nil
}

func (f *frameConn) SetWriteDeadline(time.Time) error { return nil }
