package bench

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// NewReverseProxy returns the baseline proxy: a minimal
// net/http/httputil.ReverseProxy to upstream that flushes every write (so
// streams pass through live, like slipstream) and keeps enough idle
// upstream connections for the harness's highest concurrency. It does no
// routing, auth or translation: it is the floor a Go proxy costs.
func NewReverseProxy(upstream *url.URL) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.FlushInterval = -1
	rp.Transport = &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return rp
}

// ServeReverseProxy listens on addr (127.0.0.1 only) and serves the
// baseline proxy to upstream until the listener fails. ready, if set, is
// called with the bound address once the listener is up.
func ServeReverseProxy(addr, upstream string, ready func(addr string)) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return fmt.Errorf("cannot parse upstream URL: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen for reverse proxy: %w", err)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	srv := &http.Server{Handler: NewReverseProxy(u), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
