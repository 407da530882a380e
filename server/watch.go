package server

import (
	"crypto/tls"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/server/upstream"
)

// clientConn returns the client's connection when it is a real socket (TCP
// or Unix, or TLS over one), else nil: a RequestCtx built by a caller that
// is not a socket (tests, the WebSocket transport) holds a stand-in whose
// methods may panic; a WebSocket turn's departure comes through its sink
// (bindFrames).
func clientConn(ctx *fasthttp.RequestCtx) net.Conn {
	switch c := ctx.Conn().(type) {
	case *net.TCPConn, *net.UnixConn, *tls.Conn:
		return c
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
// however long it runs. The deadline moves only once a quarter of the
// timeout has passed (moving it costs a runtime timer update), so it is
// always at least three quarters of the timeout ahead.
func (x *exchange) extendWrite() {
	w := x.s.cfg.Timeouts.Write.D()
	if x.conn == nil || w <= 0 {
		return
	}
	now := time.Now()
	if now.Sub(x.lastWrite) < w/4 {
		return
	}
	x.lastWrite = now
	_ = x.conn.SetWriteDeadline(now.Add(w))
}

// writeFailed records why a write to the client failed: it ran into
// timeouts.write (the deadline is at most a timeout after the last move),
// or the client went away.
func (x *exchange) writeFailed() {
	if w := x.s.cfg.Timeouts.Write.D(); x.conn != nil && w > 0 && time.Since(x.lastWrite) >= w*3/4 && x.result == resultOK {
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

// watcher notices a client that hung up while its response waits on a
// silent upstream (no write would fail). Every interval it peeks at the
// client's socket (or reads a WebSocket turn's departure signal), and when
// the client is gone it stops the upstream: before the response head it
// closes the call's connection (upstream.Interrupt), so the pending Do
// returns at once and the provider stops; after it, it closes the body
// stream, which ends the relay's blocked read. It runs on a timer, not a
// goroutine of its own; stop waits for a check in progress, so after stop
// nothing touches the exchange.
type watcher struct {
	mu    sync.Mutex
	on    bool
	call  bool     // watching a call before its response head (startCall)
	left  bool     // the client was seen gone
	up    net.Addr // the connection of the call in flight (bind), or nil
	t     *time.Timer
	every time.Duration
	raw   syscall.RawConn
	x     *exchange

	// An operator's cancel (live.go): cancelled stays set until the
	// exchange leaves the live registry; relay is set while a response
	// body is relayed (start to stop), when cancel closes it.
	cancelled bool
	relay     *exchange
}

// startCall watches x's client while x's upstream call (with its failover
// attempts) waits for a response head. Only x's owner calls it, and ends
// it with stopCall.
func (w *watcher) startCall(x *exchange) {
	w.arm(x, true)
}

// start watches x's client while a response relays the upstream's body.
// Only x's owner calls it, and ends it with stop.
func (w *watcher) start(x *exchange) {
	w.arm(x, false)
}

func (w *watcher) arm(x *exchange, call bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.left, w.up, w.call = false, nil, call
	if w.relay = nil; !call {
		w.relay = x
		if w.cancelled {
			w.closeRelayed(x)
		}
	}
	if x.conn == nil && x.goneCh == nil {
		return
	}
	w.x, w.on, w.every, w.raw = x, true, x.s.watchEvery(), nil
	if w.t == nil {
		w.t = time.AfterFunc(w.every, w.check)
	} else {
		w.t.Reset(w.every)
	}
}

// bind notes the connection a call is using (what Response.LocalAddr
// returned, read in the goroutine running the call), so that check can
// interrupt it. It reports false when the client is already gone: the
// call must not be sent.
func (w *watcher) bind(up net.Addr) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.left {
		return false
	}
	if w.call {
		w.up = up
	}
	return true
}

// markGone records that the owner saw its client leave (a failed write)
// and interrupts a call in flight.
func (w *watcher) markGone() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.left = true
	if w.call && w.up != nil {
		upstream.Interrupt(w.up)
	}
}

// stopCall ends the watch of a call and reports whether the client left
// meanwhile.
func (w *watcher) stopCall() (left bool) {
	w.stop()
	w.mu.Lock()
	left = w.left
	w.mu.Unlock()
	return left
}

// stop ends the watch; after it returns no check runs.
func (w *watcher) stop() {
	w.mu.Lock()
	if w.on {
		w.on = false
		w.t.Stop()
	}
	w.x, w.raw, w.up, w.relay = nil, nil, nil, nil
	w.mu.Unlock()
}

// gone reports whether the client left: its socket is closed, or its
// WebSocket turn's sink says so.
func (w *watcher) gone() bool {
	if w.x.conn != nil {
		if w.raw == nil {
			if w.raw = rawConn(w.x.conn); w.raw == nil {
				return false
			}
		}
		return peerGone(w.raw)
	}
	select {
	case <-w.x.goneCh:
		return true
	default:
		return false
	}
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
	w.on, w.left = false, true
	w.x.try.abandoned.Store(true) // no further failover attempt
	if w.call {
		if w.up != nil {
			upstream.Interrupt(w.up)
		}
		return
	}
	// The relay is blocked reading the upstream body: closing it (safe
	// beside a read in flight) ends that read with an error, and the
	// relay finishes and releases as for any failed write.
	if c, ok := w.x.upResp.BodyStream().(fasthttp.ReadCloserWithError); ok {
		_ = c.CloseWithError(errClientGone)
	}
}

// cancel stops x's upstream for an operator (live.go): like check for a
// departed client, except that the client stays and gets the dialect's
// error. A call waiting for its response head is interrupted when its
// connection is known, and fails over no further; a relayed body is
// closed (the connection is dropped, not pooled), which ends the relay's
// read, now or as soon as the relay starts.
func (w *watcher) cancel(x *exchange) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancelled = true
	x.try.abandoned.Store(true)
	if w.relay != nil {
		w.closeRelayed(w.relay)
		return
	}
	if w.call && w.up != nil {
		upstream.Interrupt(w.up)
	}
}

// closeRelayed closes the upstream body x relays. w.mu is held.
func (w *watcher) closeRelayed(x *exchange) {
	if c, ok := x.upResp.BodyStream().(fasthttp.ReadCloserWithError); ok {
		_ = c.CloseWithError(errCancelled)
	}
}

// isCancelled reports whether an operator cancelled the request.
func (w *watcher) isCancelled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cancelled
}

// clearCancel forgets a cancel once the request left the live registry.
func (w *watcher) clearCancel() {
	w.mu.Lock()
	w.cancelled = false
	w.mu.Unlock()
}
