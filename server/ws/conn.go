package ws

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/openai"
	"slipstream/pool"
)

// conn is one WebSocket connection. Its reader goroutine reads frames
// and notices a departed client at once, also while a response streams.
// Each message is served by a turn (startTurn), a goroutine that lasts as
// long as the message: one at a time (Codex never sends a frame before
// the previous response completed), and the only writer of data frames.
// An idle connection keeps only its reader. Pings and close frames go out
// through writeControl, which may run beside a turn.
type conn struct {
	t    *Transport
	nc   net.Conn // the socket (socket.go)
	cred []byte   // the credential the upgrade was authenticated with

	hdr  fasthttp.RequestHeader // the upgrade's headers, cleaned, as a POST
	rctx fasthttp.RequestCtx    // the request head and response status/headers of each frame
	sink turnSink               // the sink of the turn in flight

	gone     chan struct{} // closed when the client is gone (or shut down)
	goneOnce sync.Once
	idle     chan struct{} // a token: whoever holds it owns the next frame (see closeIfIdle)
	turns    sync.WaitGroup
	runTurn  func() // c.turn, bound once: a go statement with arguments allocates
	pinger   *time.Timer
	closeWhy atomic.Pointer[closeReason] // set: close once no frame is in flight

	hb  [14]byte  // frame header scratch
	ctl [125]byte // control frame payload
	// Beside the arrays, where they fill padding: conn is 4 KiB, not
	// the next size class (4.75 KiB).
	frag      bool       // the message in c.in came in more than one frame
	checkedOK bool       // checked describes c.body
	msgKind   message    // the message the turn in flight serves
	closeSent bool       // guarded by ctlMu: no frame follows the close frame
	ctlMu     sync.Mutex // one control frame at a time (control.go)

	in       *pool.Buffer // the message being read or served
	reserved int64        // bytes of it counted in the server's bytes in flight
	body     *pool.Buffer // the HTTP body it expanded into
	out      *pool.Buffer // output items of the response in flight
	exp      openai.FrameExpansion
	vals     openai.FrameVals // the frame's members ParseFrame reads
	checked  Checked          // what the expansion knows of c.body
	msg      []byte           // events built here (errors, prewarm)
	data     []byte           // an event's data lines joined (eventFields)
	id       [64]byte

	streamMu sync.Mutex
	stream   io.Closer // the whole answer's body stream being read, closed when the client leaves

	frames int

	wbuf []byte // frames queued for one socket write
	werr error  // the first failed socket write

	state      transcript // owned by t.store
	prev, next *conn      // t.store's recency list
}

func newConn(t *Transport, ctx *fasthttp.RequestCtx, cred []byte) *conn {
	c := &conn{
		t:    t,
		gone: make(chan struct{}),
		idle: make(chan struct{}, 1),
	}
	c.idle <- struct{}{}
	c.cred = append([]byte(nil), cred...)
	ctx.Request.Header.CopyTo(&c.hdr)
	cleanHeaders(&c.hdr)
	return c
}

// cleanHeaders makes the upgrade's headers those of a POST: the WebSocket
// handshake headers and the beta token that only means "WebSocket" go.
func cleanHeaders(h *fasthttp.RequestHeader) {
	h.SetMethod(fasthttp.MethodPost)
	var drop [][]byte
	for k := range h.All() {
		if len(k) > 14 && equalFold(k[:14], "Sec-Websocket-") {
			drop = append(drop, k)
		}
	}
	for _, k := range drop {
		h.DelBytes(k)
	}
	for _, k := range [...]string{"Upgrade", "Connection", "Openai-Beta", "Content-Length", "Transfer-Encoding", "Expect"} {
		h.Del(k)
	}
	h.SetContentType("application/json")
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i]|0x20, s[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// blankRequest is what serve initialises each connection's request
// context from. Init only reads it (it copies it), so every connection
// shares it: a fresh fasthttp.Request of serve's own would sit in serve's
// frame (1 KB) for the connection's life, and take the reader goroutine
// past its first 2 KiB stack.
var blankRequest fasthttp.Request

// serve runs the connection taken over (takeOver): the reader loop, and
// the turns it starts. It closes the socket when the connection ends.
func (c *conn) serve() {
	defer c.nc.Close()
	if r := c.t.add(c); r != nil {
		c.sendClose(r.code, r.text)
		return
	}
	defer c.t.remove(c)
	c.t.upgrades.Add(1)
	c.rctx.Init(&blankRequest, c.nc.RemoteAddr(), discard{}) // the remote address for the server's logs
	c.extendRead()
	c.pinger = time.AfterFunc(c.t.cfg().Ping, c.ping)
	if c.t.logging() {
		c.t.logf("WS %s open remote=%s", pathOf(&c.hdr), c.nc.RemoteAddr())
	}
	c.read()
	c.setGone()
	c.turns.Wait()
	c.pinger.Stop()
	c.t.store.drop(c)
	c.releaseFrame()
	if c.t.logging() {
		c.t.logf("WS %s close frames=%d", pathOf(&c.hdr), c.frames)
	}
}

// read runs the reader loop; a panic in it ends only this connection.
func (c *conn) read() {
	defer c.survive("WebSocket reader")
	c.readLoop()
}

// survive, deferred on a connection's goroutine, recovers a panic there:
// it tells Options.Panicked, closes the connection with 1011 and wakes
// its reader. The connection's state may be broken, so nothing more is
// served on it; without this the panic would end the process.
func (c *conn) survive(where string) {
	p := recover()
	if p == nil {
		return
	}
	if f := c.t.cfg().Panicked; f != nil {
		f(where, p)
	}
	c.sendClose(closeInternalError, "internal error")
	c.setGone()
	_ = c.nc.SetReadDeadline(time.Now())
}

// startTurn serves message m on a goroutine of its own. The reader holds
// the idle token when it calls it, and the turn hands the token back. A
// message that was received is always answered: served, or an error
// event; a close the transport asked for waits until it has been.
func (c *conn) startTurn(m message) {
	if c.runTurn == nil {
		c.runTurn = c.turn
	}
	c.msgKind = m
	c.turns.Add(1)
	go c.runTurn()
}

// turn serves c.msgKind; the reader does not touch it until the turn has
// handed the idle token back.
func (c *conn) turn() {
	defer c.turns.Done()
	defer c.survive("WebSocket turn")
	c.frames++
	switch m := c.msgKind; m {
	case msgRefused:
		c.sendError(429, "rate_limit_error", "rate_limit_exceeded", msgBytesInFlight)
	default:
		c.handle(c.in.B, m == msgBinary)
	}
	// Buffers go back to the pools between responses: an idle
	// connection holds none, and one large frame or event does not
	// stay pinned to the connection that carried it.
	c.releaseFrame()
	if cap(c.msg) > 64<<10 {
		c.msg = nil
	}
	if cap(c.data) > 64<<10 {
		c.data = nil
	}
	c.idle <- struct{}{}
	c.closeIfIdle()
}

// msgBytesInFlight is the message of a frame refused by Options.Admit.
const msgBytesInFlight = "too many request bytes in flight (limits.max_bytes_in_flight); retry shortly"

// idleTimeout is how long the reader waits for a frame or a pong.
func (c *conn) idleTimeout() time.Duration { return max(3*c.t.cfg().Ping, time.Minute) }

func (c *conn) extendRead() { _ = c.nc.SetReadDeadline(time.Now().Add(c.idleTimeout())) }

// ping sends a ping and schedules the next; a failed ping means the client
// is gone.
func (c *conn) ping() {
	select {
	case <-c.gone:
		return
	default:
	}
	if err := c.writeControl(opPing, nil, 10*time.Second); err != nil {
		c.setGone()
		return
	}
	c.pinger.Reset(c.t.cfg().Ping)
}

// setGone marks the client gone: the body stream being read is closed,
// which ends the upstream request, and the reader is woken.
func (c *conn) setGone() {
	c.goneOnce.Do(func() {
		close(c.gone)
		c.streamMu.Lock()
		if c.stream != nil {
			_ = c.stream.Close()
		}
		c.streamMu.Unlock()
		if c.nc != nil {
			_ = c.nc.SetReadDeadline(time.Now())
		}
	})
}

// setStream records the body stream being read (nil when done).
// It reports false when the client already left.
func (c *conn) setStream(s io.Closer) bool {
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	select {
	case <-c.gone:
		return false
	default:
	}
	c.stream = s
	return true
}

// closeReason is the close frame a connection is to end with.
type closeReason struct {
	code int
	text string
}

var (
	closeShutdown = &closeReason{closeGoingAway, "shutting down"}
	closeTooMany  = &closeReason{closeTryAgain, "too many WebSocket connections (limits.ws_connections); use HTTP"}
	closeRevoked  = &closeReason{closePolicy, "the API key of this connection is no longer valid"}
)

// shutdown closes the connection with r now if no frame is in flight, or
// once the frame in flight (one being read or served) has been answered.
// The first reason given wins.
func (c *conn) shutdown(r *closeReason) {
	c.closeWhy.CompareAndSwap(nil, r)
	c.closeIfIdle()
}

// closeIfIdle closes the connection when a close was asked for and it can
// take the idle token: then neither the reader (which takes the token
// before it reads a message) nor a turn (which holds it while it serves
// one) has a frame, and none is lost. Otherwise the turn calls it again
// when it hands the token back.
func (c *conn) closeIfIdle() {
	r := c.closeWhy.Load()
	if r == nil {
		return
	}
	select {
	case <-c.idle:
		c.closeWith(r.code, r.text)
	default:
	}
}

// closeWith sends a close frame and ends the connection.
func (c *conn) closeWith(code int, reason string) {
	c.sendClose(code, reason)
	c.setGone()
}

// write sends one text frame now, with any frames queued before it.
func (c *conn) write(b []byte) error {
	c.queue(b)
	return c.flush()
}

// queue appends a text frame holding b to the frames not yet sent. Data
// frames are written by the turn alone, straight to the socket, so that
// several events read from the upstream at once go out in one write; a
// socket write is atomic with respect to the control frames written from
// other goroutines (control.go), so frames never interleave.
func (c *conn) queue(b []byte) {
	w := append(c.wbuf, 0x81) // FIN, text
	switch n := len(b); {
	case n < 126:
		w = append(w, byte(n))
	case n < 1<<16:
		w = append(w, 126, byte(n>>8), byte(n))
	default:
		w = append(w, 127, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	c.wbuf = append(w, b...)
	if len(c.wbuf) >= maxQueued {
		_ = c.flush() // a failure is kept in c.werr
	}
}

// maxQueued is how many frame bytes wait for a flush at most.
const maxQueued = 64 << 10

// flush writes the queued frames. After a failed write every later flush
// fails too: the client is gone.
func (c *conn) flush() error {
	if c.werr != nil || len(c.wbuf) == 0 {
		c.wbuf = c.wbuf[:0]
		return c.werr
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, c.werr = c.nc.Write(c.wbuf)
	if cap(c.wbuf) > 4*maxQueued {
		c.wbuf = nil // one huge event does not pin its buffer
	}
	c.wbuf = c.wbuf[:0]
	return c.werr
}

// pathOf is the upgrade's path, quoted, for a log line: without its
// query, which may carry the client's key (?key=).
func pathOf(h *fasthttp.RequestHeader) string {
	path, _, _ := bytes.Cut(h.RequestURI(), []byte{'?'})
	return string(codec.AppendQuoted(nil, path))
}

// discard is the fasthttp logger of the frames' request contexts: the
// server logs through its own logger.
type discard struct{}

func (discard) Printf(string, ...any) {}
