package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// startServer runs slipstream on a loopback port with the YAML config
// (where ${UP} is replaced by upURL) and returns its base URL.
func startServer(t testing.TB, yml, upURL string) (string, *Server) {
	t.Helper()
	yml = strings.ReplaceAll(yml, "${UP}", upURL)
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return serveConfigServer(t, cfg, nil)
}

// serveConfig runs slipstream with a parsed config, logging to w.
func serveConfig(t testing.TB, cfg *config.Config, w io.Writer) string {
	base, _ := serveConfigServer(t, cfg, w)
	return base
}

func serveConfigServer(t testing.TB, cfg *config.Config, w io.Writer) (string, *Server) {
	t.Helper()
	return serveConfigListener(t, cfg, w, nil)
}

// serveConfigListener is serveConfigServer on a loopback listener that
// wrap, when not nil, wraps (in TLS, say); the URL says http either way.
func serveConfigListener(t testing.TB, cfg *config.Config, w io.Writer, wrap func(net.Listener) net.Listener) (string, *Server) {
	t.Helper()
	s, err := New(cfg, Options{Log: w, Now: func() time.Time { return time.Unix(1767225600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		ln = wrap(ln)
	}
	return serveOn(t, s, ln), s
}

// serveOn serves s on ln until the test ends, then shuts it down, and
// returns ln's URL.
func serveOn(t testing.TB, s *Server, ln net.Listener) string {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
	})
	return "http://" + ln.Addr().String()
}

// recorder is an in-test upstream that records each request and answers
// with a canned response.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
	heads  []http.Header

	status      int
	contentType string
	reply       string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, b)
	rc.paths = append(rc.paths, r.URL.RequestURI())
	rc.heads = append(rc.heads, r.Header.Clone())
	rc.mu.Unlock()
	ct := rc.contentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Request-Id", "req_up_1")
	status := rc.status
	if status == 0 {
		status = 200
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, rc.reply)
}

func (rc *recorder) last() ([]byte, string, http.Header) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bodies) == 0 {
		return nil, "", nil
	}
	n := len(rc.bodies) - 1
	return rc.bodies[n], rc.paths[n], rc.heads[n]
}

func newUpstream(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	return up
}

// post sends a request and returns status, headers and body.
func post(t testing.TB, url, body string, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func mustEqual(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n got %q\nwant %q", what, clipT(got), clipT(want))
	}
}

func clipT(b []byte) []byte {
	if len(b) > 400 {
		return append(b[:400:400], "..."...)
	}
	return b
}
