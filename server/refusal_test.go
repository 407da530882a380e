package server

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
)

// headRefusal writes a request head and the first n bytes of its body on
// a fresh connection, then reads the answer. It returns the status line,
// the head and how long the answer took from the write.
func headRefusal(t *testing.T, base, head string, n int) (string, string, time.Duration) {
	t.Helper()
	c := rawhttp.Dial(t, base)
	start := time.Now()
	if _, err := io.WriteString(c, head+strings.Repeat("x", n)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	status, h := readHead(t, bufio.NewReader(c))
	return status, h, time.Since(start)
}

// TestHeadRefusalsDoNotWaitForTheBody: every refusal the head decides
// (key, route, method, content type, declared size, a Gemini model the key
// may not use) goes out after the head and a few body bytes, with
// Connection: close; it does not wait for fasthttp's 8 KiB read-ahead nor
// for the upload. The wrong key's 401 comes within 100 ms.
func TestHeadRefusalsDoNotWaitForTheBody(t *testing.T) {
	up := newUpstream(t, &recorder{reply: anthropicReply})
	cfg := strings.Replace(guardConfig, "4096", "67108864", 1)
	cfg = strings.Replace(cfg, "{name: dev, key: good-key}", "{name: dev, key: good-key, models: [\"claude-*\"]}", 1)
	base, _ := startServer(t, cfg, up.URL)
	f := func(method, path, headers, want string, limit time.Duration) {
		t.Helper()
		head := method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "Content-Length: 52428800\r\n\r\n"
		status, h, took := headRefusal(t, base, head, 8)
		if status != want || !strings.Contains(strings.ToLower(h), "connection: close") {
			t.Fatalf("%s %s: %q, want %s with Connection: close", method, path, h, want)
		}
		if took > limit {
			t.Fatalf("%s %s: %s took %v, want under %v", method, path, want, took, limit)
		}
	}
	good, jsonCT := "x-api-key: good-key\r\n", "Content-Type: application/json\r\n"
	f("POST", "/v1/messages", "x-api-key: wrong\r\n"+jsonCT, "HTTP/1.1 401 Unauthorized", 100*time.Millisecond)
	f("POST", "/v1/nothing", good+jsonCT, "HTTP/1.1 404 Not Found", time.Second)
	f("PUT", "/v1/messages", good+jsonCT, "HTTP/1.1 405 Method Not Allowed", time.Second)
	f("POST", "/v1/messages", good+"Content-Type: text/plain\r\n", "HTTP/1.1 415 Unsupported Media Type", time.Second)
	f("POST", "/v1beta/models/gemini-x:generateContent", good+jsonCT, "HTTP/1.1 403 Forbidden", time.Second)
	cfg = strings.Replace(guardConfig, "4096", "1024", 1)
	small, _ := startServer(t, cfg, up.URL)
	base = small
	f("POST", "/v1/messages", good+jsonCT, "HTTP/1.1 413 Request Entity Too Large", time.Second)
	if _, p, _ := up.Config.Handler.(*recorder).last(); p != "" {
		t.Fatalf("the upstream was called: %s", p)
	}
}

// TestBytesInFlightRefusalDoesNotReadTheUpload: while one 10 MB upload
// holds limits.max_bytes_in_flight, a second gets its 429 after its first
// KiB, with Connection: close, instead of after the whole upload.
func TestBytesInFlightRefusalDoesNotReadTheUpload(t *testing.T) {
	up := newUpstream(t, &recorder{reply: anthropicReply})
	cfg := strings.Replace(guardConfig, "max_body_bytes: 4096", "max_body_bytes: 64MiB\n  max_bytes_in_flight: 16MiB", 1)
	base, s := startServer(t, cfg, up.URL)
	head := "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: good-key\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n"
	first := rawhttp.Dial(t, base)
	defer first.Close()
	io.WriteString(first, head+"{"+strings.Repeat(" ", 16<<10))
	for deadline := time.Now().Add(10 * time.Second); s.bytesInFlight.Load() < 10<<20; {
		if time.Now().After(deadline) {
			t.Fatalf("the first upload was not admitted: %d bytes in flight", s.bytesInFlight.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	status, h, took := headRefusal(t, base, head, 1<<10)
	if status != "HTTP/1.1 429 Too Many Requests" || !strings.Contains(strings.ToLower(h), "connection: close") {
		t.Fatalf("second upload: %q", h)
	}
	if took > 2*time.Second {
		t.Fatalf("the 429 took %v", took)
	}
}
