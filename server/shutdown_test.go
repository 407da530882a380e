package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// TestShutdownDrainsStreams: Shutdown stops accepting new connections but
// lets a stream in flight run to its terminal event, then Serve returns.
func TestShutdownDrainsStreams(t *testing.T) {
	t.Parallel()
	s, ln := newUnserved(t, mockConfig(t, "chunks: 6, chunk_delay: 60ms"), nil)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"mock","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 64)
	if _, err := io.ReadAtLeast(resp.Body, first, 1); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(ctx) }()

	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the stream was cut by shutdown: %v", err)
	}
	if !strings.Contains(string(rest), "event: message_stop") {
		t.Fatalf("the stream did not reach its terminal event:\n%s", rest)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), 200*time.Millisecond); err == nil {
		t.Fatal("still accepting connections after Shutdown")
	}
}

// TestShutdownRacingServe: a Shutdown that comes before or while Serve
// starts (a SIGTERM during start-up) still ends Serve. fasthttp's own
// Shutdown does nothing when no listener is registered yet, so a Serve
// that began after it served forever.
func TestShutdownRacingServe(t *testing.T) {
	t.Parallel()
	cfg := mockConfig(t, "")
	for i := range 40 {
		s, ln := newUnserved(t, cfg, io.Discard)
		served := make(chan error, 1)
		if i%2 == 0 {
			_ = s.Shutdown(context.Background()) // before Serve
			go func() { served <- s.Serve(ln) }()
		} else {
			go func() { served <- s.Serve(ln) }()
			_ = s.Shutdown(context.Background()) // while Serve starts
		}
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d: Serve still running 5s after Shutdown", i)
		}
		ln.Close()
	}
}

// mockConfig is a config with one mock provider serving every model,
// with extra (flow-style fields, say "chunks: 6") on it, and keep-alive
// pings off.
func mockConfig(t *testing.T, extra string) *config.Config {
	t.Helper()
	if extra != "" {
		extra = ", " + extra
	}
	cfg, err := config.Parse([]byte("providers:\n  - {name: m, kind: mock, models: [\"*\"]"+extra+"}\ntimeouts: {keepalive: 0s}\n"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newUnserved builds a server on cfg and a loopback listener for it,
// leaving Serve and Shutdown to the test.
func newUnserved(t *testing.T, cfg *config.Config, log io.Writer) (*Server, net.Listener) {
	t.Helper()
	s, err := New(cfg, Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, ln
}
