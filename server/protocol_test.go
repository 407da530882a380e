package server

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
)

const guardConfig = `
keys:
  - {name: dev, key: good-key}
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
limits:
  max_body_bytes: 4096
timeouts:
  keepalive: 0s
`

// readHead reads one response head from br, bounded by the conn's
// deadline, and returns its status line and the head.
func readHead(t *testing.T, br *bufio.Reader) (string, string) {
	t.Helper()
	var head strings.Builder
	status := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a response head: %v (so far %q)", err, head.String())
		}
		if status == "" {
			status = strings.TrimSpace(line)
		}
		head.WriteString(line)
		if line == "\r\n" {
			return status, head.String()
		}
	}
}

// TestUnauthenticatedBodyIsNotRead: a request without a valid key gets its
// 401 at once, without the server waiting for (or reading) its announced
// 10 MB body, and the connection closes. (fasthttp reads the first 8 KiB
// of a body with the head, before any handler runs; the client sends 16.)
func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := startServer(t, strings.Replace(guardConfig, "4096", "67108864", 1), up.URL)
	for _, auth := range []string{"", "x-api-key: wrong\r\n"} {
		c := rawhttp.Dial(t, base)
		io.WriteString(c, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\n"+auth+"Content-Length: 10000000\r\n\r\n"+strings.Repeat("x", 16<<10))
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		br := bufio.NewReader(c)
		status, head := readHead(t, br)
		if status != "HTTP/1.1 401 Unauthorized" || !strings.Contains(strings.ToLower(head), "connection: close") {
			t.Fatalf("head %q", head)
		}
		// The body, then the end: the server closed (a reset, as the
		// client's unread bytes were dropped, is an end too).
		rest, err := io.ReadAll(br)
		if err != nil && !strings.Contains(err.Error(), "reset") || !strings.Contains(string(rest), `"authentication_error"`) {
			t.Fatalf("after the head: %q, %v", rest, err)
		}
		c.Close()
	}
}

// TestExpectContinueWaitsForChecks: "100 Continue" goes out only when the
// route, the key, the declared size and admission pass; otherwise the
// refusal comes first and the body is never asked for.
func TestExpectContinueWaitsForChecks(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := startServer(t, guardConfig, up.URL)
	body := `{"model":"claude-x","max_tokens":1,"messages":[]}`
	f := func(path, auth string, length int, want string) {
		t.Helper()
		c := rawhttp.Dial(t, base)
		defer c.Close()
		io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+auth+"Expect: 100-continue\r\nContent-Length: "+itoa(length)+"\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		br := bufio.NewReader(c)
		status, head := readHead(t, br)
		if status != want {
			t.Fatalf("%s %q: first answer %q, want %q", path, auth, head, want)
		}
		if want != "HTTP/1.1 100 Continue" {
			return
		}
		io.WriteString(c, body)
		if status, head = readHead(t, br); status != "HTTP/1.1 200 OK" {
			t.Fatalf("after the body: %q", head)
		}
	}
	good := "x-api-key: good-key\r\n"
	f("/v1/messages", "", len(body), "HTTP/1.1 401 Unauthorized")
	f("/v1/messages", "x-api-key: bad\r\n", len(body), "HTTP/1.1 401 Unauthorized")
	f("/v1/nothing", good, len(body), "HTTP/1.1 404 Not Found")
	f("/v1/messages", good, 1<<20, "HTTP/1.1 413 Request Entity Too Large")
	f("/v1/messages", good, len(body), "HTTP/1.1 100 Continue")
}

// TestMethodNotAllowed: a known path with the wrong method is a 405 with
// Allow, in the route's dialect, not a 404.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := startServer(t, guardConfig, up.URL)
	f := func(method, path, allow, wantType string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("x-api-key", "good-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != allow || !strings.Contains(string(b), wantType) {
			t.Fatalf("%s %s: %d Allow=%q %s", method, path, resp.StatusCode, resp.Header.Get("Allow"), b)
		}
	}
	f("GET", "/v1/messages", "POST", `"type":"error"`)
	f("PUT", "/v1/chat/completions", "POST", `"invalid_request_error"`)
	f("DELETE", "/v1beta/models/gemini-x:generateContent", "POST", `"status":`)
	f("POST", "/healthz", "GET, HEAD", `"error"`)
}

// TestHeadHealthz: load balancers probe with HEAD.
func TestHeadHealthz(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := startServer(t, guardConfig, up.URL)
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Head(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("HEAD %s: %d", path, resp.StatusCode)
		}
	}
}
