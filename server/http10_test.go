package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestNoChunkedToHTTP10: an HTTP/1.0 client cannot read chunked encoding:
// a stream reaches it unframed, ended by the connection's close.
func TestNoChunkedToHTTP10(t *testing.T) {
	t.Parallel()
	stream := "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	up := newUpstream(t, &recorder{reply: stream, contentType: "text/event-stream"})
	base, _ := startServer(t, sameConfig, up.URL)
	body := `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`
	got := rawExchange(t, base, "POST /v1/messages HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "+itoa(len(body))+"\r\n\r\n"+body, 3*time.Second)
	head, rest, _ := strings.Cut(got, "\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.") || strings.Contains(strings.ToLower(head), "chunked") || rest != stream {
		t.Fatalf("head %q, body %q", head, rest)
	}
}

// TestNoChunkedToHTTP10Body: the same for a whole body of unknown length.
func TestNoChunkedToHTTP10Body(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, anthropicReply[:20])
		w.(http.Flusher).Flush() // chunked from here
		io.WriteString(w, anthropicReply[20:])
	}))
	base, s := startServer(t, sameConfig, up.URL)
	body := `{"model":"claude-x","max_tokens":5,"messages":[]}`
	got := rawExchange(t, base, "POST /v1/messages HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "+itoa(len(body))+"\r\n\r\n"+body, 3*time.Second)
	head, rest, _ := strings.Cut(got, "\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 200") || strings.Contains(strings.ToLower(head), "chunked") || rest != anthropicReply {
		t.Fatalf("head %q, body %q", head, rest)
	}
	waitIdle(t, s)
}
