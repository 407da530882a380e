package upstream

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpproxy"
	"golang.org/x/net/http/httpproxy"
)

// dialer opens connections to one provider: directly or through its
// proxy, then TLS when the base URL is https. slipstream does the TLS
// handshake itself (fasthttp takes a connection with a Handshake method as
// TLS already), so that the connection wrapper sees HTTP bytes, and a
// handshake failure is told apart from the request's own failure.
type dialer struct {
	connect time.Duration
	idle    time.Duration
	tls     *tls.Config // nil for http
	proxy   fasthttp.DialFunc
}

func newDialer(u *url.URL, o *Options) (*dialer, error) {
	d := &dialer{connect: o.Connect, idle: o.Idle}
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.TLS != nil {
			cfg = o.TLS.Clone()
		}
		cfg.ServerName = u.Hostname()
		if cfg.ClientSessionCache == nil {
			cfg.ClientSessionCache = tls.NewLRUClientSessionCache(0)
		}
		d.tls = cfg
	}
	pu, err := proxyFor(u, o.Proxy)
	if err != nil || pu == nil {
		return d, err
	}
	pd := fasthttpproxy.Dialer{
		Config:         httpproxy.Config{HTTPProxy: pu.String(), HTTPSProxy: pu.String()},
		DialDualStack:  true,
		Timeout:        o.Connect,
		ConnectTimeout: o.Connect,
	}
	d.proxy, err = pd.GetDialFuncForTLS(false, d.tls != nil)
	if err != nil {
		return nil, fmt.Errorf("cannot use proxy %s: %w", pu.Redacted(), err)
	}
	return d, nil
}

// proxyFor returns the proxy for the base URL u, or nil for a direct
// connection. An empty setting reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY
// with the rules of Go's net/http (loopback hosts are never proxied).
func proxyFor(u *url.URL, setting string) (*url.URL, error) {
	switch setting {
	case "direct":
		return nil, nil
	case "":
		pu, err := httpproxy.FromEnvironment().ProxyFunc()(u)
		if err != nil {
			// The error would quote the variable's value, which may
			// hold a password.
			return nil, errors.New("cannot use the proxy from the environment: HTTPS_PROXY or HTTP_PROXY is not a valid URL")
		}
		return pu, nil
	}
	pu, err := url.Parse(setting)
	if err != nil || pu.Host == "" {
		return nil, fmt.Errorf("cannot parse proxy URL %q", clipProxy(setting))
	}
	switch pu.Scheme {
	case "http", "socks5", "socks5h":
		return pu, nil
	}
	return nil, fmt.Errorf("unsupported proxy scheme %q (want http or socks5)", pu.Scheme)
}

func clipProxy(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:] // user info may hold a password
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// dial opens a connection to addr on a goroutine of its own and waits for
// it. A connect runs about 3.5 KiB deep into fasthttp's dialer, net and
// the runtime, and the call that needs a connection (a request's, on its
// handler's goroutine) is deep already: dialed there, it took every such
// goroutine past its 8 KiB stack, a stack copy and 8 KiB more for as long
// as the request lives. A dial is once per new connection, not per
// request, so the goroutine and its channel cost little.
func (d *dialer) dial(addr string) (net.Conn, error) {
	done := make(chan dialed, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil { // as it would have been on the caller's goroutine
				done <- dialed{err: fmt.Errorf("BUG: the dial panicked: %v", p)}
			}
		}()
		c, err := d.dialHere(addr)
		done <- dialed{c, err}
	}()
	r := <-done
	return r.c, r.err
}

type dialed struct {
	c   net.Conn
	err error
}

func (d *dialer) dialHere(addr string) (net.Conn, error) {
	var c, raw net.Conn
	var err error
	switch {
	case d.proxy != nil:
		c, err = d.proxy(addr)
		if err != nil {
			return nil, &DialError{Stage: StageProxy, Err: err}
		}
	case strings.HasPrefix(addr, "[") || strings.Count(addr, ":") > 1:
		c, err = fasthttp.DialDualStackTimeout(addr, d.connect)
	default:
		c, err = fasthttp.DialTimeout(addr, d.connect)
	}
	if err != nil {
		return nil, &DialError{Stage: StageConnect, Err: err}
	}
	raw = c
	if d.tls != nil {
		if c, err = d.handshake(c); err != nil {
			return nil, &DialError{Stage: StageTLS, Err: err}
		}
	}
	w := &conn{Conn: c, raw: raw, idle: d.idle}
	w.addr.c = w
	if d.tls != nil {
		return &tlsConn{w}, nil
	}
	return w, nil
}

func (d *dialer) handshake(raw net.Conn) (net.Conn, error) {
	tc := tls.Client(raw, d.tls)
	if err := tc.SetDeadline(time.Now().Add(d.connect)); err != nil {
		raw.Close()
		return nil, err
	}
	if err := tc.Handshake(); err != nil {
		raw.Close()
		return nil, err
	}
	if err := tc.SetDeadline(time.Time{}); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

// Dial stages, for DialError.
const (
	StageConnect = "connect"
	StageProxy   = "proxy"
	StageTLS     = "tls"
)

// DialError is a failure to open a connection, with the stage it failed
// in. Its text names the stage and the cause, never a credential.
type DialError struct {
	Stage string
	Err   error
}

func (e *DialError) Error() string { return e.Stage + ": " + e.Err.Error() }
func (e *DialError) Unwrap() error { return e.Err }

// conn is one upstream connection. It bounds the silence between reads
// once a response has started: the first read after fasthttp sets a
// deadline waits for that deadline (the first-byte timeout); every later
// read waits at most idle. An event stream the relay paces (Pace) is
// bounded instead by the time since its last data event (see pace.go).
// It also counts the requests written on it and whether the current one
// got a response byte, which Stale reads.
type conn struct {
	net.Conn
	raw      net.Conn // the TCP connection (c.Conn is TLS over it, or it)
	idle     time.Duration
	started  bool // a byte arrived since the last SetReadDeadline
	writing  bool // the last I/O was a write
	answered bool // a byte of the current request's response arrived
	requests int  // requests begun on this connection
	addr     connAddr

	// An event stream the relay paces (pace.go): events counts the data
	// events it reported, seen the count at the last check, at lastSeen.
	paced        bool
	events, seen uint32
	lastSeen     time.Time

	interrupted atomic.Bool // closed by Interrupt: the failure is not Stale

	// A call waiting for its response head with ticks (await.go): due is
	// when the next tick is, deadline the caller's read deadline (what
	// SetReadDeadline was given), set the deadline last set on the socket.
	due, deadline, set time.Time
	tick               func() time.Time
}

// connAddr is the local address fasthttp records in Response.LocalAddr;
// it leads from a failed call back to its connection.
type connAddr struct {
	net.Addr
	c *conn
}

func (c *conn) LocalAddr() net.Addr {
	if c.addr.Addr == nil {
		c.addr.Addr = c.Conn.LocalAddr()
	}
	return &c.addr
}

func (c *conn) Write(p []byte) (int, error) {
	if !c.writing {
		c.writing, c.answered, c.paced = true, false, false
		c.requests++
	}
	return c.Conn.Write(p)
}

// setDeadline sets t as the connection's read deadline, remembering it.
func (c *conn) setDeadline(t time.Time) error {
	c.set = t
	return c.Conn.SetReadDeadline(t)
}

func (c *conn) SetReadDeadline(t time.Time) error {
	c.started, c.paced, c.deadline = false, false, t
	return c.setDeadline(c.armed())
}

func (c *conn) Read(p []byte) (int, error) {
	c.writing = false
	if c.paced {
		return c.readPaced(p)
	}
	if c.tick != nil {
		n, err := c.readAwaiting(p)
		if n > 0 {
			c.started, c.answered = true, true
		}
		return n, err
	}
	if c.started && c.idle > 0 {
		if err := c.setDeadline(time.Now().Add(c.idle)); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.started, c.answered = true, true
	}
	return n, err
}

// tlsConn is a conn over TLS. fasthttp takes a connection with a
// Handshake method to be TLS already and does not wrap it again.
type tlsConn struct{ *conn }

func (c *tlsConn) Handshake() error { return nil }
