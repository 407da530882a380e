// Package upstream holds the fasthttp clients slipstream uses to call
// providers: one client per provider, response bodies streamed, dial and
// idle timeouts enforced on the connection itself, outbound proxies, and
// the classification of failed calls into causes an operator can act on.
package upstream

import (
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
)

// Options configure a Client. Zero values take the defaults noted.
type Options struct {
	// BaseURL is the provider's base URL; its scheme says whether
	// connections use TLS and its host picks the proxy from the
	// environment. Required.
	BaseURL   string
	Connect   time.Duration // dial (and TLS handshake, proxy tunnel) timeout; 0 = 10s
	FirstByte time.Duration // from sending the request to the response headers; 0 = none
	Idle      time.Duration // longest silence between two reads of a body; 0 = none
	// IdleConn is how long an idle connection is kept for reuse; 0 = 2s.
	IdleConn time.Duration
	// MaxConns bounds the connections open at once; 0 = fasthttp's
	// default (512). A call that finds all busy waits up to Connect for
	// one, then fails with fasthttp.ErrNoFreeConns.
	MaxConns int
	// Proxy is "" (follow HTTPS_PROXY, HTTP_PROXY and NO_PROXY as Go's
	// net/http does), "direct", or an http:// or socks5:// proxy URL.
	Proxy string
	// Headers are sent on every request (SetHeaders).
	Headers map[string]string
	// TLS is the client TLS configuration; nil uses the system roots.
	// ServerName is always the base URL's host.
	TLS *tls.Config
}

// Client calls one provider. Responses are always streamed
// (Response.BodyStream), so the caller decides how much of a body to hold.
type Client struct {
	c         *fasthttp.Client
	fresh     *fasthttp.Client // never pools a connection: for retries
	firstByte time.Duration
	maxConns  int
	headers   []header
}

type header struct{ k, v []byte }

// New returns a client with the given options. It fails on a base URL or
// a proxy setting it cannot use; the error never quotes either (they may
// hold user info).
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.BaseURL)
	if err != nil {
		return nil, errors.New("cannot parse the base URL")
	}
	if o.Connect <= 0 {
		o.Connect = 10 * time.Second
	}
	if o.IdleConn <= 0 {
		o.IdleConn = 2 * time.Second
	}
	d, err := newDialer(u, &o)
	if err != nil {
		return nil, err
	}
	c := &Client{firstByte: o.FirstByte, maxConns: o.MaxConns, c: newFasthttp(d, &o), fresh: newFasthttp(d, &o)}
	for k, v := range o.Headers {
		c.headers = append(c.headers, header{[]byte(k), []byte(v)})
	}
	return c, nil
}

// MaxHead is the size of a connection's read buffer, and so the largest
// response head a provider may send (CauseHeadTooLarge beyond it;
// providers send 1-2 KiB). The buffer is held for the whole of a live
// stream, whose events pass through it, so it is sized for events: 4 KiB
// where 8 KiB held 4 KiB more per stream for nothing.
const MaxHead = 4 << 10

func newFasthttp(d *dialer, o *Options) *fasthttp.Client {
	return &fasthttp.Client{
		Dial:                          d.dial,
		StreamResponseBody:            true,
		MaxConnsPerHost:               o.MaxConns,
		MaxIdleConnDuration:           o.IdleConn,
		DisableHeaderNamesNormalizing: false,
		NoDefaultUserAgentHeader:      true,
		DisablePathNormalizing:        true,
		MaxConnWaitTimeout:            o.Connect,
		ReadBufferSize:                MaxHead,
		// The request head and a body of up to 16 KiB leave in one write
		// (fasthttp's 4 KiB default sent a 10 KB request in two TCP
		// sends); a larger body in two. The buffer is pooled and held
		// only while a request is written.
		WriteBufferSize: 16 << 10,
	}
}

// Do sends req and waits for the response headers, at most FirstByte. The
// caller must close resp's body stream (CloseBodyStream, or CloseWithError
// when it stopped early, which drops the connection) before releasing resp.
//
// Do makes one attempt. When it fails on a pooled connection before any
// response byte (Stale), the upstream closed that connection while it
// sat idle, the request was never processed, and the caller may send it
// again with DoFresh.
func (c *Client) Do(req *fasthttp.Request, resp *fasthttp.Response) error {
	if c.firstByte > 0 {
		return c.c.DoDeadline(req, resp, time.Now().Add(c.firstByte))
	}
	return c.c.Do(req, resp)
}

// DoFresh is Do on a newly dialed connection, which is closed after this
// response instead of being pooled. The caller restores a body stream
// (Request.SetBodyStream) before calling it: the first attempt consumed it.
func (c *Client) DoFresh(req *fasthttp.Request, resp *fasthttp.Response) error {
	req.SetConnectionClose()
	if c.firstByte > 0 {
		return c.fresh.DoDeadline(req, resp, time.Now().Add(c.firstByte))
	}
	return c.fresh.Do(req, resp)
}

// Stale reports whether a Do that returned err failed on a reused
// connection before a single response byte arrived: the only failure
// that is safe to retry (a response byte means the upstream took the
// request; a fresh connection that fails says the upstream itself is
// failing; a timeout may mean the upstream is still working on it; an
// Interrupt means nobody wants the answer).
func Stale(resp *fasthttp.Response, err error) bool {
	if err == nil || IsTimeout(err) || errors.Is(err, fasthttp.ErrNoFreeConns) {
		return false
	}
	a, ok := resp.LocalAddr().(*connAddr)
	return ok && a.c.requests > 1 && !a.c.answered && !a.c.interrupted.Load()
}

// SetHeaders sets the provider's configured headers on an upstream request.
func (c *Client) SetHeaders(h *fasthttp.RequestHeader) {
	for i := range c.headers {
		h.SetBytesKV(c.headers[i].k, c.headers[i].v)
	}
}

// MaxConns is the connection limit (0: fasthttp's default).
func (c *Client) MaxConns() int { return c.maxConns }

// CloseIdle closes idle connections (at shutdown).
func (c *Client) CloseIdle() {
	c.c.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
}

// IsTimeout reports whether err is a timeout (dial, first byte or idle).
func IsTimeout(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTLSHandshakeTimeout) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
