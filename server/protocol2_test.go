package server

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"slipstream/internal/rawhttp"
)

// TestHeaderReadTimeout: timeouts.header_read bounds a client that sends
// a request head slowly.
func TestHeaderReadTimeout(t *testing.T) {
	up := newUpstream(t, &recorder{reply: anthropicReply})
	base, _ := startServer(t, sameConfig+"  header_read: 300ms\n", up.URL)
	c := rawhttp.Dial(t, base)
	defer c.Close()
	io.WriteString(c, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n")
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	io.ReadAll(c) // until the server closes
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the server waited %v for the rest of the head", d)
	}
}

// TestStreamedRequestAnsweredWithWholeBody: a client asked for a stream,
// the upstream (another dialect) answered one JSON body. The client gets
// a real event stream translated from it, labelled so, whether or not
// keep-alive pings already went out.
func TestStreamedRequestAnsweredWithWholeBody(t *testing.T) {
	t.Parallel()
	for _, delay := range []time.Duration{0, 300 * time.Millisecond} {
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			time.Sleep(delay)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, chatReply)
		}))
		base, _ := startServer(t, strings.Replace(translatedConfig, "keepalive: 0s", "keepalive: 100ms", 1), up.URL)
		status, h, got := post(t, base+"/v1/messages", `{"model":"gpt-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"stream":true}`)
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") ||
			!strings.Contains(string(got), "event: message_start\n") || !strings.Contains(string(got), `"text":"ok"`) ||
			!strings.HasSuffix(string(got), "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
			t.Fatalf("delay %v: %d %q %q", delay, status, h.Get("Content-Type"), got)
		}
	}
}

// TestUpstreamHTMLErrorInDialect: an HTML error page from in front of a
// same-dialect provider reaches the client as its dialect's error, with
// the upstream's status.
func TestUpstreamHTMLErrorInDialect(t *testing.T) {
	t.Parallel()
	f := func(path, body string, upStatus int, ok func(b []byte) bool) {
		t.Helper()
		up := newUpstream(t, &recorder{status: upStatus, contentType: "text/html", reply: "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"})
		base, _ := startServer(t, sameConfig, up.URL)
		status, _, got := post(t, base+path, body)
		if status != upStatus || !ok(got) {
			t.Fatalf("%s: %d %q", path, status, got)
		}
	}
	f("/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, 503, func(b []byte) bool {
		return gjson.GetBytes(b, "type").Str == "error" && gjson.GetBytes(b, "error.type").Exists()
	})
	f("/v1/chat/completions", `{"model":"gpt-4o","messages":[]}`, 502, func(b []byte) bool {
		return gjson.GetBytes(b, "error.message").Exists()
	})
	f("/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`, 429, func(b []byte) bool {
		return gjson.GetBytes(b, "type").Str == "error"
	})
}

var _ = bufio.NewReader
