package chaos

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request an Upstream received.
type Request struct {
	Method, URI string
	Header      http.Header
	Body        []byte
}

// Handler answers one request on c and reports whether the connection may
// carry another one. It may write anything: the point is to misbehave.
type Handler func(r *Request, c *Conn) (keepAlive bool)

// Upstream is a raw-TCP HTTP/1.1 server on a loopback port whose answers
// are scripted by a Handler. It counts the connections in the middle of a
// request (Busy), so a test can see whether the proxy let go of them.
type Upstream struct {
	handle Handler
	// idle closes a kept-alive connection after this much silence; 0
	// keeps it until Close.
	idle time.Duration

	addr string
	busy atomic.Int64
	wg   sync.WaitGroup

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	reqs   []*Request
	stop   chan struct{} // closed by Close and Restart: handlers give up
	closed bool
}

// NewUpstream starts an upstream on 127.0.0.1 answering with h; idle, when
// positive, closes connections that carry no request for that long.
func NewUpstream(h Handler, idle time.Duration) (*Upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("cannot listen: %w", err)
	}
	u := &Upstream{handle: h, idle: idle, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	u.start(ln)
	return u, nil
}

// URL is the upstream's root, http://127.0.0.1:port.
func (u *Upstream) URL() string { return "http://" + u.addr }

// Busy is the number of connections in the middle of a request: read
// but not yet answered in full, or held by a handler waiting for the
// peer to leave.
func (u *Upstream) Busy() int64 { return u.busy.Load() }

// Open is the number of connections open, busy or idle.
func (u *Upstream) Open() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.conns)
}

// Requests returns the requests received so far.
func (u *Upstream) Requests() []*Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*Request(nil), u.reqs...)
}

// Restart drops the listener and every connection, as a restarting
// server does, and listens again on the same port.
func (u *Upstream) Restart() error {
	u.shut()
	ln, err := net.Listen("tcp", u.addr)
	if err != nil {
		return fmt.Errorf("cannot listen again on %s: %w", u.addr, err)
	}
	u.mu.Lock()
	u.closed = false
	u.mu.Unlock()
	u.start(ln)
	return nil
}

// Close stops the upstream and waits for its goroutines.
func (u *Upstream) Close() { u.shut() }

func (u *Upstream) start(ln net.Listener) {
	u.mu.Lock()
	u.ln = ln
	u.stop = make(chan struct{})
	stop := u.stop
	u.mu.Unlock()
	u.wg.Add(1)
	go u.accept(ln, stop)
}

func (u *Upstream) shut() {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	u.closed = true
	u.ln.Close()
	close(u.stop)
	for c := range u.conns {
		c.Close()
	}
	u.mu.Unlock()
	u.wg.Wait()
}

func (u *Upstream) accept(ln net.Listener, stop chan struct{}) {
	defer u.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		u.mu.Lock()
		if u.closed {
			u.mu.Unlock()
			nc.Close()
			return
		}
		u.conns[nc] = struct{}{}
		u.wg.Add(1)
		u.mu.Unlock()
		go u.serve(&Conn{Conn: nc, br: bufio.NewReader(nc), stop: stop})
	}
}

func (u *Upstream) serve(c *Conn) {
	defer u.wg.Done()
	defer func() {
		c.Close()
		u.mu.Lock()
		delete(u.conns, c.Conn)
		u.mu.Unlock()
	}()
	for first := true; ; first = false {
		if !first && u.idle > 0 {
			c.SetReadDeadline(time.Now().Add(u.idle))
		}
		hr, err := http.ReadRequest(c.br)
		if err != nil {
			return
		}
		c.SetReadDeadline(time.Time{})
		body, err := io.ReadAll(hr.Body)
		if err != nil {
			return
		}
		r := &Request{Method: hr.Method, URI: hr.RequestURI, Header: hr.Header, Body: body}
		u.mu.Lock()
		u.reqs = append(u.reqs, r)
		u.mu.Unlock()
		u.busy.Add(1)
		keep := u.handle(r, c)
		u.busy.Add(-1)
		if !keep {
			return
		}
	}
}

// Conn is the connection a Handler writes its answer on.
type Conn struct {
	net.Conn
	br   *bufio.Reader
	stop chan struct{}
}

// Head writes a status line and headers (name, value pairs) and the blank
// line.
func (c *Conn) Head(status int, kv ...string) error {
	b := []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, kv[i]+": "+kv[i+1]+"\r\n"...)
	}
	b = append(b, "\r\n"...)
	_, err := c.Write(b)
	return err
}

// Reply writes a whole response with a Content-Length.
func (c *Conn) Reply(status int, contentType string, body []byte, kv ...string) error {
	kv = append(kv, "Content-Type", contentType, "Content-Length", strconv.Itoa(len(body)))
	if err := c.Head(status, kv...); err != nil {
		return err
	}
	_, err := c.Write(body)
	return err
}

// Chunk writes one chunk of a chunked body (nothing for an empty b).
func (c *Conn) Chunk(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := c.Write(append(append([]byte(strconv.FormatInt(int64(len(b)), 16)+"\r\n"), b...), "\r\n"...))
	return err
}

// EndChunks writes the last chunk of a chunked body.
func (c *Conn) EndChunks() error {
	_, err := c.Write([]byte("0\r\n\r\n"))
	return err
}

// Reset closes the connection with a TCP RST instead of a FIN.
func (c *Conn) Reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// Stopped is closed when the upstream closes or restarts.
func (c *Conn) Stopped() <-chan struct{} { return c.stop }

// WaitGone blocks until the peer closes the connection (or sends more
// bytes), the upstream stops, or max passes; it reports whether the peer
// left.
func (c *Conn) WaitGone(max time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(max))
	done := make(chan error, 1)
	go func() {
		_, err := c.br.ReadByte()
		done <- err
	}()
	select {
	case err := <-done:
		ne, ok := err.(net.Error)
		return !(ok && ne.Timeout())
	case <-c.stop:
		c.SetReadDeadline(time.Now())
		<-done //nolint:errcheck // the read ends on the deadline just set
		return false
	}
}

// Sleep pauses for d or until the upstream stops; it reports whether the
// whole pause passed.
func (c *Conn) Sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.stop:
		return false
	}
}
