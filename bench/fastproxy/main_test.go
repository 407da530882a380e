package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"slipstream/bench"
)

// TestStreamsAsItArrives: fastproxy passes a paced stream through whole
// and live, the first event reaching the client long before the last
// leaves the upstream. A proxy that buffered the body would make the
// live workload's reference figure meaningless.
func TestStreamsAsItArrives(t *testing.T) {
	const events, pace = 10, 30 * time.Millisecond
	stub := bench.NewStub(bench.StubConfig{Events: events, Delay: pace})
	if err := stub.Start(); err != nil {
		t.Fatal(err)
	}
	defer stub.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(stub.URL())
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown below
	defer srv.Shutdown()

	body := bench.AppendClaudeBody(nil, bench.BodyOpts{Model: bench.ModelClaude, Size: 10 << 10, Seed: 1, Stream: true})
	req, err := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+bench.Anthropic.Path(bench.ModelClaude, true), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	bench.Anthropic.SetHeaders(req.Header)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := bytes.NewBuffer(nil)
	if _, err := io.CopyN(got, resp.Body, 1); err != nil {
		t.Fatal(err)
	}
	firstAfter := time.Since(start)
	if _, err := got.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	all := time.Since(start)
	if resp.StatusCode != http.StatusOK || !bench.Anthropic.Complete(got.Bytes(), true) {
		t.Fatalf("status %d, incomplete stream: %q", resp.StatusCode, got.Bytes())
	}
	if firstAfter > all/2 {
		t.Fatalf("first byte after %v of %v: the stream was held back", firstAfter, all)
	}
}
