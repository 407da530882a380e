package bench

import (
	"context"
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
// baseline proxy to upstream until ctx ends (then it shuts down
// gracefully and returns nil) or the listener fails. ready, if set, is
// called with the bound address once the listener is up.
func ServeReverseProxy(ctx context.Context, addr, upstream string, ready func(addr string)) error {
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
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx) //nolint:errcheck // Serve reports the outcome
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return fmt.Errorf("cannot serve reverse proxy: %w", err)
	}
	return nil
}
