package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
)

// dialStream sends a streamed Anthropic request on a new connection and
// returns the connection and a reader positioned after the response head.
func dialStream(t *testing.T, base string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := rawhttp.Dial(t, base)
	body := `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	if status, head := readHead(t, br); status != "HTTP/1.1 200 OK" {
		t.Fatalf("head %q", head)
	}
	return c, br
}

// upstreamClosed is an SSE upstream that writes first, then stays silent
// (or keeps writing, when more is set) until its client, slipstream,
// closes the connection; it reports when it saw that on closed, and each
// request it read (but the warm-up's) on arrived.
func upstreamClosed(t *testing.T, headerDelay time.Duration, first string, more string) (string, chan time.Time, chan struct{}) {
	closed := make(chan time.Time, 1)
	arrived := make(chan struct{}, 16)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(warmMark)) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-time.After(headerDelay):
		case <-r.Context().Done():
			closed <- time.Now()
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		deadline := time.After(20 * time.Second)
		for {
			if more != "" {
				if _, err := io.WriteString(w, more); err != nil {
					closed <- time.Now()
					return
				}
				w.(http.Flusher).Flush()
			}
			select {
			case <-r.Context().Done():
				closed <- time.Now()
				return
			case <-deadline:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}))
	return up.URL, closed, arrived
}

func waitClosed(t *testing.T, closed chan time.Time, since time.Time, bound time.Duration, what string) {
	t.Helper()
	select {
	case at := <-closed:
		if d := at.Sub(since); d > bound {
			t.Fatalf("%s: the upstream saw its connection closed after %v (bound %v)", what, d, bound)
		}
	case <-time.After(bound + 2*time.Second):
		t.Fatalf("%s: the upstream connection is still open", what)
	}
}

// TestClientGoneDuringSilentGap: the client hangs up while the upstream is
// silent mid-stream (no write fails): slipstream notices within a
// keep-alive interval, closes the upstream connection and frees the slot.
func TestClientGoneDuringSilentGap(t *testing.T) {
	upURL, closed, _ := upstreamClosed(t, 0, fmt.Sprintf(anthEvent, 1)+fmt.Sprintf(anthEvent, 2), "")
	base, s := startServer(t, strings.Replace(sameConfig, "keepalive: 0s", "keepalive: 200ms", 1), upURL)
	warmUp(t, base)
	before := runtime.NumGoroutine()
	c, br := dialStream(t, base)
	for n := 0; n < 2; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data:") {
			n++
		}
	}
	gone := time.Now()
	c.Close()
	waitClosed(t, closed, gone, time.Second, "silent gap")
	waitIdle(t, s)
	waitGoroutines(t, before)
}

// warmMark marks the warm-up request's body, which slipstream forwards
// (it forwards no client header), so the stub answers it at once.
const warmMark = "warm-up"

// warmUp serves one stream through the upstream on its own connection, so
// the long-lived goroutines of every end (connection cleaners, a worker)
// exist before a goroutine count is taken.
func warmUp(t *testing.T, base string) {
	t.Helper()
	warm := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"`+warmMark+`"}],"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := warm.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond)
}

// TestClientGoneBeforeFirstByte: the client hangs up while a streamed
// request still waits for the upstream's response head (keep-alive pings
// going out). Within a keep-alive interval the upstream connection is
// closed (the provider stops) and the slot is free.
func TestClientGoneBeforeFirstByte(t *testing.T) {
	upURL, closed, _ := upstreamClosed(t, 5*time.Second, fmt.Sprintf(anthEvent, 1), fmt.Sprintf(anthEvent, 2))
	base, s := startServer(t, strings.Replace(sameConfig, "keepalive: 0s", "keepalive: 200ms", 1), upURL)
	warmUp(t, base)
	before := runtime.NumGoroutine()
	c, br := dialStream(t, base)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, ": ping") {
			break
		}
	}
	gone := time.Now()
	c.Close()
	waitClosed(t, closed, gone, time.Second, "before the first byte")
	waitIdle(t, s)
	waitGoroutines(t, before)
}

// hangUpInFlight sends a request that is not streamed on c, closes c once
// the call is in flight (the upstream, upstreamClosed, reports it on
// arrived), and waits for the upstream to see its connection closed within
// a second.
func hangUpInFlight(t *testing.T, c net.Conn, closed chan time.Time, arrived chan struct{}, what string) {
	t.Helper()
	body := `{"model":"claude-x","max_tokens":5,"messages":[]}`
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	select { // the call is in flight
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the call never reached the upstream", what)
	}
	gone := time.Now()
	c.Close()
	waitClosed(t, closed, gone, time.Second, what)
}

// TestClientGoneBeforeFirstByteNotStreamed: the same for a request that
// is not streamed (no ping goes out; the handler waits on the call).
func TestClientGoneBeforeFirstByteNotStreamed(t *testing.T) {
	upURL, closed, arrived := upstreamClosed(t, 5*time.Second, anthropicReply, "")
	var logs testkit.Buffer
	cfg := parseConfig(t, strings.Replace(sameConfig, "keepalive: 0s", "keepalive: 200ms", 1), upURL)
	cfg.Log.Access = true
	base, s := serveConfigServer(t, cfg, &logs)
	warmUp(t, base)
	before := runtime.NumGoroutine()
	c := rawhttp.Dial(t, base)
	hangUpInFlight(t, c, closed, arrived, "before the first byte, not streamed")
	waitIdle(t, s)
	waitGoroutines(t, before)
	if l := logs.String(); !strings.Contains(l, "result=client_gone") || strings.Contains(l, "upstream error") {
		t.Fatalf("log %q", l)
	}
}

// TestClientGoneOverTLS: a TLS client that hangs up sends a close_notify
// alert before its FIN. The alert stays unread in the socket, so a peek
// finds bytes, not the end of the stream; the departure must be seen all
// the same, within a keep-alive interval, before the first byte (the
// upstream connection closed, the slot freed).
func TestClientGoneOverTLS(t *testing.T) {
	t.Parallel()
	upURL, closed, arrived := upstreamClosed(t, 5*time.Second, anthropicReply, "")
	cfg := parseConfig(t, strings.Replace(sameConfig, "keepalive: 0s", "keepalive: 200ms", 1), upURL)
	cert := httptest.NewTLSServer(http.NotFoundHandler())
	serverTLS := cert.TLS.Clone()
	cert.Close()
	base, s := serveConfigListener(t, cfg, nil, func(ln net.Listener) net.Listener { return tls.NewListener(ln, serverTLS) })
	c, err := tls.Dial("tcp", strings.TrimPrefix(base, "http://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	hangUpInFlight(t, c, closed, arrived, "over TLS") // close_notify, then FIN
	waitIdle(t, s)
}

// TestPipelinedRequestIsNotADeparture: bytes waiting in a client's socket
// while its request is in flight (the next request, pipelined) are not a
// departure: both requests are answered.
func TestPipelinedRequestIsNotADeparture(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 2)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		time.Sleep(600 * time.Millisecond) // three keep-alive intervals
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, anthropicReply)
	}))
	base, _ := startServer(t, strings.Replace(sameConfig, "keepalive: 0s", "keepalive: 200ms", 1), up.URL)
	c := rawhttp.Dial(t, base)
	defer c.Close()
	body := `{"model":"claude-x","max_tokens":5,"messages":[]}`
	req := fmt.Sprintf("POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	io.WriteString(c, req)
	select { // the first is in flight: the second waits in the socket
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request never reached the upstream")
	}
	io.WriteString(c, req)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for i := range 2 {
		status, head := readHead(t, br)
		if status != "HTTP/1.1 200 OK" {
			t.Fatalf("response %d: %q", i+1, head)
		}
		n := 0
		fmt.Sscanf(head[strings.Index(strings.ToLower(head), "content-length:")+len("content-length:"):], "%d", &n)
		if _, err := io.ReadFull(br, make([]byte, n)); err != nil {
			t.Fatalf("response %d body: %v", i+1, err)
		}
	}
}

// TestWriteTimeout: a client that stops reading holds nothing past
// timeouts.write: the stream ends, the upstream connection closes, the
// slot is freed, and the access log says why.
func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	upURL, closed, _ := upstreamClosed(t, 0, fmt.Sprintf(anthEvent, 0), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+strings.Repeat("x", 32<<10)+"\"}}\n\n")
	var logs testkit.Buffer
	cfg := parseConfig(t, sameConfig+"  write: 500ms\n", upURL)
	cfg.Log.Access = true
	base, s := serveConfigServer(t, cfg, &logs)
	start := stopReading(t, base)
	waitClosed(t, closed, start, 8*time.Second, "write timeout")
	waitIdle(t, s)
	logs.WaitFor(t, 5*time.Second, "result=write_timeout") // written after the slot is given back
}

// TestWriteTimeoutAfterPings: the same for a stream whose head came late
// enough to ping first. The connection fasthttp hands over after the
// pings has its deadlines cleared; the relay must arm timeouts.write
// again, or a client that stops reading holds the stream forever.
func TestWriteTimeoutAfterPings(t *testing.T) {
	t.Parallel()
	upURL, closed, _ := upstreamClosed(t, 300*time.Millisecond, fmt.Sprintf(anthEvent, 0), "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+strings.Repeat("x", 32<<10)+"\"}}\n\n")
	cfg := parseConfig(t, strings.Replace(sameConfig, "keepalive: 0s", "keepalive: 50ms", 1)+"  write: 4s\n", upURL) // a deadline moves at most once a second
	base, s := serveConfigServer(t, cfg, io.Discard)
	start := stopReading(t, base)
	waitClosed(t, closed, start, 12*time.Second, "write timeout after pings")
	waitIdle(t, s)
}

// stopReading sends a streamed request on a connection with a small
// receive buffer that it never reads, and returns when it sent it.
func stopReading(t *testing.T, base string) time.Time {
	c := rawhttp.Dial(t, base)
	t.Cleanup(func() { c.Close() })
	c.(*net.TCPConn).SetReadBuffer(4096)
	body := `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return time.Now()
}
