// Package upstream holds the fasthttp clients slipstream uses to call
// providers: one client per provider, response bodies streamed, dial and
// idle timeouts enforced on the connection itself.
package upstream

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Options configure a Client. Zero values take the defaults in config.
type Options struct {
	Connect   time.Duration // dial timeout
	FirstByte time.Duration // from sending the request to the response headers
	Idle      time.Duration // longest silence between two reads of a body
	MaxConns  int           // per host; 0 = fasthttp's default (512)
}

// Client calls one provider. Responses are always streamed
// (Response.BodyStream), so the caller decides how much of a body to hold.
type Client struct {
	c         *fasthttp.Client
	firstByte time.Duration
}

// New returns a client with the given options.
func New(o Options) *Client {
	d := &dialer{connect: o.Connect, idle: o.Idle}
	return &Client{
		firstByte: o.FirstByte,
		c: &fasthttp.Client{
			Dial:                          d.dial,
			StreamResponseBody:            true,
			MaxConnsPerHost:               o.MaxConns,
			MaxIdleConnDuration:           90 * time.Second,
			DisableHeaderNamesNormalizing: false,
			NoDefaultUserAgentHeader:      true,
			DisablePathNormalizing:        true,
			MaxConnWaitTimeout:            o.Connect,
			ReadBufferSize:                8 << 10, // response headers; bodies stream past it
		},
	}
}

// Do sends req and waits for the response headers, at most FirstByte. The
// caller must close resp's body stream (CloseBodyStream, or CloseWithError
// when it stopped early, which drops the connection) before releasing resp.
func (c *Client) Do(req *fasthttp.Request, resp *fasthttp.Response) error {
	if c.firstByte > 0 {
		return c.c.DoDeadline(req, resp, time.Now().Add(c.firstByte))
	}
	return c.c.Do(req, resp)
}

// CloseIdle closes idle connections (at shutdown).
func (c *Client) CloseIdle() { c.c.CloseIdleConnections() }

// IsTimeout reports whether err is a timeout (dial, first byte or idle).
func IsTimeout(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

type dialer struct {
	connect time.Duration
	idle    time.Duration
}

func (d *dialer) dial(addr string) (net.Conn, error) {
	timeout := d.connect
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var c net.Conn
	var err error
	if strings.HasPrefix(addr, "[") || strings.Count(addr, ":") > 1 {
		c, err = fasthttp.DialDualStackTimeout(addr, timeout)
	} else {
		c, err = fasthttp.DialTimeout(addr, timeout)
	}
	if err != nil || d.idle <= 0 {
		return c, err
	}
	return &idleConn{Conn: c, idle: d.idle}, nil
}

// idleConn bounds the silence between reads once a response has started:
// the first read after fasthttp sets a deadline waits for that deadline
// (the first-byte timeout); every later read waits at most idle.
type idleConn struct {
	net.Conn
	idle    time.Duration
	started bool
}

func (c *idleConn) SetReadDeadline(t time.Time) error {
	c.started = false
	return c.Conn.SetReadDeadline(t)
}

func (c *idleConn) Read(p []byte) (int, error) {
	if c.started {
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.started = true
	}
	return n, err
}
