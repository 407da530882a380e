package server

import (
	"crypto/tls"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// clientConn returns the client's connection when it is a real socket (TCP
// or Unix, or TLS over one), else nil: a RequestCtx built by a caller that
// is not a socket (tests, the WebSocket transport) holds a stand-in whose
// methods may panic, and that caller sees its client leave by itself.
func clientConn(ctx *fasthttp.RequestCtx) net.Conn {
	switch c := ctx.Conn().(type) {
	case *net.TCPConn, *net.UnixConn, *tls.Conn:
		return c
	}
	return nil
}

// goner is a stand-in connection that says when its client left (the
// WebSocket transport's frames).
type goner interface{ Gone() <-chan struct{} }

// goneChan is the departure signal of a synthetic ctx's stand-in
// connection, or nil.
func goneChan(ctx *fasthttp.RequestCtx) <-chan struct{} {
	if g, ok := ctx.Conn().(goner); ok {
		return g.Gone()
	}
	return nil
}

// rawConn is the socket under c, for peeking; nil when there is none.
func rawConn(c net.Conn) syscall.RawConn {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// extendWrite gives the client timeouts.write more to take the next bytes:
// a write that makes no progress for that long fails (fasthttp's write of
// the stream, or ours), which ends the response and closes the upstream.
// It is called before each write, so a stream that writes is never cut,
// however long it runs.
func (x *exchange) extendWrite() {
	if x.conn == nil || x.s.cfg.Timeouts.Write <= 0 {
		return
	}
	x.lastWrite = time.Now()
	_ = x.conn.SetWriteDeadline(x.lastWrite.Add(x.s.cfg.Timeouts.Write.D()))
}

// writeFailed records why a write to the client failed: it ran into
// timeouts.write, or the client went away.
func (x *exchange) writeFailed() {
	if w := x.s.cfg.Timeouts.Write.D(); x.conn != nil && w > 0 && time.Since(x.lastWrite) >= w && x.result == resultOK {
		x.result = resultWriteTimeout
	}
	x.clientGone()
}

// watchEvery is how often a client is checked for having hung up while
// its response waits on the upstream: the keep-alive interval, or 15s when
// pings are off.
func (s *Server) watchEvery() time.Duration {
	if k := s.keepalive(); k > 0 {
		return k
	}
	return 15 * time.Second
}

// watcher notices a client that hung up while its stream waits on a silent
// upstream (no write would fail): every interval it peeks at the client's
// socket, and when the client is gone it closes the upstream body, which
// ends the relay's blocked read. It runs on a timer, not a goroutine of
// its own; stop waits for a check in progress, so after stop nothing
// touches the exchange.
type watcher struct {
	mu    sync.Mutex
	on    bool
	t     *time.Timer
	every time.Duration
	raw   syscall.RawConn
	x     *exchange
}

// start watches x's client, if it has a socket or a departure signal.
// Only x's owner calls it.
func (w *watcher) start(x *exchange) {
	if x.conn == nil && x.goneCh == nil {
		return
	}
	if x.conn != nil {
		if w.raw = rawConn(x.conn); w.raw == nil {
			return
		}
	}
	w.mu.Lock()
	w.x, w.on, w.every = x, true, x.s.watchEvery()
	if w.t == nil {
		w.t = time.AfterFunc(w.every, w.check)
	} else {
		w.t.Reset(w.every)
	}
	w.mu.Unlock()
}

// gone reports whether the client left: its socket is closed, or its
// stand-in connection says so.
func (w *watcher) gone() bool {
	if w.raw != nil {
		return peerGone(w.raw)
	}
	select {
	case <-w.x.goneCh:
		return true
	default:
		return false
	}
}

// stop ends the watch; after it returns no check runs.
func (w *watcher) stop() {
	w.mu.Lock()
	if w.on {
		w.on = false
		w.t.Stop()
	}
	w.x, w.raw = nil, nil
	w.mu.Unlock()
}

func (w *watcher) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.on {
		return
	}
	if !w.gone() {
		w.t.Reset(w.every)
		return
	}
	w.on = false
	// The relay is blocked reading the upstream body: closing it (safe
	// beside a read in flight) ends that read with an error, and the
	// relay finishes and releases as for any failed write.
	if c, ok := w.x.upResp.BodyStream().(fasthttp.ReadCloserWithError); ok {
		_ = c.CloseWithError(errClientGone)
	}
}
