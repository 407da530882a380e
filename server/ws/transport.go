// Package ws serves the OpenAI Responses API over WebSocket, the transport
// Codex CLI prefers: GET /v1/responses with Upgrade: websocket, then one
// text frame {"type":"response.create",...} per request and one text frame
// per Responses streaming event back.
//
// Each frame is served by the server's own HTTP handler as if it were a
// POST /v1/responses carrying the upgrade request's headers (so client
// auth, key policy, admission, every upstream dialect and its translation
// apply unchanged), with the frame's input expanded from the connection's
// transcript: a frame that chains on the previous response
// (previous_response_id) sends only the new items, and the upstream gets
// the whole conversation. A streamed response is not written as SSE: the
// handler writes its events to the turn's Sink on the connection's own
// goroutine, and each goes out as one frame holding its data.
//
// The library is github.com/fasthttp/websocket: it upgrades a fasthttp
// RequestCtx in place (no net/http bridge) and writes control frames.
// Frames are read by this package (read.go), so that a frame's length is
// admitted against the server's bytes in flight before its payload is
// read; data frames are written by it too (conn.queue).
package ws

import (
	"log"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Options configure a Transport. The zero value of every field but Handler
// works.
type Options struct {
	// Handler serves the HTTP request each frame becomes (POST on the
	// upgrade's path, in ctx): it answers in ctx.Response, or, for a
	// streamed answer, sets the response's status and headers and
	// returns the Stream, which the transport runs to out (see Stream);
	// out.Gone is the client's departure while the handler runs.
	// Required.
	Handler func(ctx *fasthttp.RequestCtx, out Sink) Stream
	// MaxFrame is the largest client frame, and the largest request body a
	// frame may expand into; a larger one closes the socket with 1009, on
	// which Codex falls back to HTTP. It is also advertised on the
	// upgrade as x-codex-websocket-max-message-bytes. Default 64 MiB.
	MaxFrame int64
	// StateBytes bounds the transcripts kept by all connections together
	// (limits.ws_state_bytes). Default 64 MiB.
	StateBytes int64
	// Ping is the interval of server pings, which keep idle sockets open
	// through proxies and find dead peers. Default 20s.
	Ping time.Duration
	// MaxConns caps open connections (limits.ws_connections); past it an
	// upgrade is answered 426, on which Codex uses HTTP for the session
	// (and a socket that arrives past it, its upgrade answered together
	// with others, is closed with 1013: see add). Default 1024.
	MaxConns int
	// Admit, when set, reserves n bytes of a data frame's payload in the
	// server's bytes in flight before the payload is read; held is what
	// earlier frames of the same message already reserved. When it
	// reports false the payload is skipped unread and the message is
	// answered with a 429 error event. Every reservation is given back
	// through Leave once the frame's bytes are freed or handed to Handler
	// as a body (which counts them itself). Default: every frame is
	// admitted.
	Admit func(n, held int64) bool
	// Leave gives back bytes Admit reserved. Required with Admit.
	Leave func(n int64)
	// Log, when set, gets one line per connection and per frame.
	Log *log.Logger
	// Panicked, when set, is told of a panic recovered on a connection's
	// reader or turn goroutine (where names which), from the deferred
	// call, so debug.Stack still shows the panic. The connection is then
	// closed with 1011; the process and the other connections go on.
	Panicked func(where string, p any)
	// Now is the clock for created_at. Default time.Now.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultMaxFrame   = 64 << 20
	DefaultStateBytes = 64 << 20
	DefaultPing       = 20 * time.Second
	DefaultMaxConns   = 1024
)

// writeTimeout bounds one frame write to a client that stopped reading.
const writeTimeout = 60 * time.Second

// Transport serves WebSocket connections. Create it with New. One
// Transport lives as long as the server: a configuration reload changes
// its Options (Update) and closes only the connections whose credential
// it revoked (Revoke).
type Transport struct {
	o     atomic.Pointer[settings]
	store store

	mu      sync.Mutex
	conns   map[*conn]struct{}
	closing bool
	wg      sync.WaitGroup

	upgrades, refused, frames, chained, notFound atomic.Int64
}

// settings are the Options in force, with what is derived from them.
type settings struct {
	Options
	maxHdr []byte // x-codex-websocket-max-message-bytes value
}

// cfg returns the settings in force; they may change between two calls.
func (t *Transport) cfg() *settings { return t.o.Load() }

// New returns a Transport for o.
func New(o Options) *Transport {
	t := &Transport{conns: map[*conn]struct{}{}}
	t.Update(o)
	return t
}

// Update puts o in force: for new upgrades, and for the open connections'
// next frames and pings. The transcripts kept are trimmed to a smaller
// StateBytes as new ones are stored.
func (t *Transport) Update(o Options) {
	if o.MaxFrame <= 0 {
		o.MaxFrame = DefaultMaxFrame
	}
	if o.StateBytes <= 0 {
		o.StateBytes = DefaultStateBytes
	}
	if o.Ping <= 0 {
		o.Ping = DefaultPing
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t.store.setMax(o.StateBytes)
	t.o.Store(&settings{Options: o, maxHdr: strconv.AppendInt(nil, o.MaxFrame, 10)})
}

// Upgrade answers ctx, a WebSocket upgrade the caller has routed and
// authenticated with cred (nil when no credential was needed), with 101
// and serves the connection until it closes. The upgrade's headers
// (credentials included) are kept for the frames, and a copy of cred for
// Revoke; ctx is not used after Upgrade returns. The fasthttp server must
// keep hijacked connections (see socket.go).
func (t *Transport) Upgrade(ctx *fasthttp.RequestCtx, cred []byte) {
	if r := checkHandshake(ctx); r != nil {
		if r.status == fasthttp.StatusUpgradeRequired {
			ctx.Response.Header.Set("Sec-WebSocket-Version", "13")
		}
		upgradeError(ctx, r.status, r.reason)
		return
	}
	t.mu.Lock()
	closing, full := t.closing, len(t.conns) >= t.cfg().MaxConns
	t.mu.Unlock()
	if closing {
		upgradeError(ctx, fasthttp.StatusServiceUnavailable, errShuttingDown)
		return
	}
	if full {
		t.refused.Add(1)
		upgradeError(ctx, fasthttp.StatusUpgradeRequired, errTooMany)
		return
	}
	o := t.cfg()
	c := newConn(t, ctx, cred)
	ctx.Response.Header.SetBytesV("X-Codex-Websocket-Max-Message-Bytes", o.maxHdr)
	switchProtocols(ctx)
	ctx.Hijack(c.takeOver)
}

type upgradeErr string

func (e upgradeErr) Error() string { return string(e) }

const (
	errShuttingDown = upgradeErr("the server is shutting down")
	errTooMany      = upgradeErr("too many WebSocket connections (limits.ws_connections); use HTTP")
)

// upgradeError answers a refused upgrade with an OpenAI error body.
func upgradeError(ctx *fasthttp.RequestCtx, status int, reason error) {
	ctx.Response.ResetBody()
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	b := append([]byte(`{"error":`), appendErrorObject(nil, "invalid_request_error", "websocket_upgrade_failed", reason.Error())...)
	ctx.SetBody(append(b, '}'))
}

// add counts c among the open connections once its socket is taken
// over, or returns why it is closed at once: the transport shuts down,
// or upgrades answered together took the last of limits.ws_connections.
// A connection counts from here, not from its 101: fasthttp hands over no
// socket when the 101 cannot be written (the client left) or the upgrade
// also asked to close the connection, and an upgrade counted before would
// keep its place for ever.
func (t *Transport) add(c *conn) *closeReason {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closing:
		return closeShutdown
	case len(t.conns) >= t.cfg().MaxConns:
		t.refused.Add(1)
		return closeTooMany
	}
	t.conns[c] = struct{}{}
	t.wg.Add(1)
	return nil
}

func (t *Transport) remove(c *conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	t.wg.Done()
}

// Shutdown refuses new upgrades and closes every connection with 1001 as
// soon as its response in flight (if any) has completed: Codex then opens
// a new socket for its next request. It waits until all connections have
// ended or done is closed.
func (t *Transport) Shutdown(done <-chan struct{}) {
	t.mu.Lock()
	t.closing = true
	for c := range t.conns {
		c.shutdown(closeShutdown)
	}
	t.mu.Unlock()
	ended := make(chan struct{})
	go func() { t.wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-done:
		t.mu.Lock()
		for c := range t.conns {
			c.setGone()
		}
		t.mu.Unlock()
	}
}

// Revoke closes, with 1008 and a reason, every connection whose
// credential keep reports false for, as soon as the frame it has in
// flight (if any) is answered. The others stay open. It returns how many
// it closes.
func (t *Transport) Revoke(keep func(cred []byte) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for c := range t.conns {
		if !keep(c.cred) {
			c.shutdown(closeRevoked)
			n++
		}
	}
	return n
}

// StateBytes returns the bytes the stored transcripts hold.
func (t *Transport) StateBytes() int64 { return t.store.Used() }

// Stats are the transport's counters since start, for metrics.
type Stats struct {
	Conns      int   // open connections
	Upgrades   int64 // connections accepted
	Refused    int64 // upgrades answered 426 (limits.ws_connections)
	Frames     int64 // response.create frames served (prewarms included)
	Chained    int64 // frames that continued the previous response
	NotFound   int64 // frames answered previous_response_not_found
	Evicted    int64 // transcripts dropped to stay within StateBytes
	StateBytes int64 // bytes the kept transcripts hold now
}

// Stats returns the transport's counters.
func (t *Transport) Stats() Stats {
	return Stats{
		Conns: t.Conns(), Upgrades: t.upgrades.Load(), Refused: t.refused.Load(),
		Frames: t.frames.Load(), Chained: t.chained.Load(), NotFound: t.notFound.Load(),
		Evicted: t.store.Evicted(), StateBytes: t.store.Used(),
	}
}

// Conns returns the number of open connections.
func (t *Transport) Conns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// logging reports whether log lines are wanted. Callers check it before
// building a line's arguments, which allocate.
func (t *Transport) logging() bool { return t.cfg().Log != nil }

// logf writes a log line. Values from the client are quoted by the
// caller.
func (t *Transport) logf(format string, args ...any) {
	if l := t.cfg().Log; l != nil {
		l.Printf(format, args...)
	}
}
