package server

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
)

// cutUpstream answers every request with head and partial, then closes
// the connection: a body cut short.
func cutUpstream(t *testing.T, head, partial string) string {
	t.Helper()
	return "http://" + testkit.Serve(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 64<<10)
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		c.Read(buf) // the request (small)
		io.WriteString(c, head+partial)
		time.Sleep(20 * time.Millisecond)
	})
}

// TestCutShortBodyIsAFailure: a non-streamed upstream body that ends
// before its length (or its last chunk) must reach the client as a
// failure, never as a complete reply, and the access log must say so.
func TestCutShortBodyIsAFailure(t *testing.T) {
	t.Parallel()
	f := func(name, head, partial string) {
		t.Helper()
		up := cutUpstream(t, head, partial)
		var logs testkit.Buffer
		cfg := parseConfig(t, sameConfig, up)
		cfg.Log.Access = true
		base, s := serveConfigServer(t, cfg, &logs)
		resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[]}`))
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode == 200 {
				t.Fatalf("%s: a complete 200 reply: %q", name, b)
			}
		}
		waitIdle(t, s)
		if l := logs.String(); strings.Contains(l, "result=ok") || !strings.Contains(l, "result=upstream_failed") {
			t.Fatalf("%s: access log %q", name, l)
		}
	}
	f("content-length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", `{"id":"msg_1","type":"mess`)
	f("chunked", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", "1a\r\n{\"id\":\"msg_1\",\"type\":\"mess\r\n")
	f("empty", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", "")
	// No length and no chunks: the close ends the body, so a cut looks
	// like an end; only a well-formed body is relayed.
	f("close-delimited", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n", `{"id":"msg_1","type":"mess`)
}

// TestCloseDelimitedBodyRelayed: a whole close-delimited body is relayed.
func TestCloseDelimitedBodyRelayed(t *testing.T) {
	t.Parallel()
	up := cutUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n", anthropicReply)
	base, s := startServer(t, sameConfig, up)
	status, _, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`)
	if status != 200 || string(got) != anthropicReply {
		t.Fatalf("%d %q", status, got)
	}
	waitIdle(t, s)
}
