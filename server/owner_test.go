package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
	"slipstream/server/config"
)

func parseConfig(t testing.TB, yml, upURL string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(strings.ReplaceAll(yml, "${UP}", upURL)), testkit.Env())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

// serveCtx runs the handler on a synthetic RequestCtx, as a caller that is
// not a socket (the WebSocket transport) does.
func serveCtx(s *Server, method, path, body string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetContentType("application/json")
	req.SetBodyString(body)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, nil, nil)
	s.Handler()(ctx)
	return ctx
}

// waitIdle waits (bounded) until s has no request in flight, and checks
// that no exchange was released twice and no panic was recovered.
func waitIdle(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.inflight.Load() != 0 || s.bytesInFlight.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests, %d bytes still in flight", s.inflight.Load(), s.bytesInFlight.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := doubleReleases.Load(); n != 0 {
		t.Fatalf("%d exchanges released twice", n)
	}
	if n := s.panics.Load(); n != 0 {
		t.Fatalf("%d panics recovered", n)
	}
}

const translatedConfig = `
providers:
  - name: gem
    kind: gemini
    base_url: ${UP}
    keys: ["g"]
    models: ["gemini-*"]
  - name: chat
    kind: openai
    base_url: ${UP}/v1
    keys: ["k"]
    models: ["gpt-*"]
  - name: anth
    kind: anthropic
    base_url: ${UP}
    keys: ["k"]
    models: ["claude-*"]
timeouts:
  keepalive: 0s
log:
  access: true
`

// TestFinalFlushFailureReleasesOnce: the client is gone when a translated
// stream writes its last event (a Gemini upstream's stream always ends
// there, and so does every truncated one). The exchange must be released
// once: a second release killed the process.
func TestFinalFlushFailureReleasesOnce(t *testing.T) {
	t.Parallel()
	f := func(model, upStream string) {
		t.Helper()
		release := make(chan struct{})
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			<-release // the client leaves before the stream ends
			io.WriteString(w, upStream)
		}))
		var logs testkit.Buffer
		cfg := parseConfig(t, translatedConfig, up.URL)
		_, s := serveConfigServer(t, cfg, &logs)
		ctx := serveCtx(s, "POST", "/v1/messages", `{"model":"`+model+`","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"stream":true}`)
		if ctx.Response.StatusCode() != 200 || !ctx.IsBodyStream() {
			t.Fatalf("%s: status %d, body stream %v", model, ctx.Response.StatusCode(), ctx.IsBodyStream())
		}
		ctx.Response.Reset() // the client hangs up: fasthttp closes the body stream
		close(release)
		waitIdle(t, s)
		// A request gives its admission slot back before its access line
		// is written: seen idle, the server may still be writing it.
		logs.WaitFor(t, 5*time.Second, `route=/v1/messages`, "result=client_gone")
	}
	// A Gemini stream has no terminal event: the end of the upstream body
	// ends it, and the final flush is the first write.
	f("gemini-x", "")
	// A truncated Chat stream (a comment, then nothing).
	f("gpt-x", ": x\n\n")
}

// TestStreamWriterPanicIsContained: a panic inside a stream relay ends that
// stream with the dialect's error event, releases the exchange once and
// leaves the process serving.
func TestStreamWriterPanicIsContained(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: chatReply})
	var logs testkit.Buffer
	cfg := parseConfig(t, sameConfig, up.URL)
	base, s := serveConfigServer(t, cfg, &logs)

	rt, _, _ := match([]byte("POST"), []byte("/v1/messages"))
	var ctx fasthttp.RequestCtx
	size, ok := s.admit(&ctx, rt.dialect)
	if !ok {
		t.Fatal("not admitted")
	}
	x := acquireExchange(s, &ctx, rt, nil, size)
	x.upResp.SetBodyStream(panicReader{}, -1)
	x.streamKind = streamSame
	var out bytes.Buffer
	w := &batchWriter{}
	w.Reset(&out)
	x.writeStream(w) // must not panic
	w.Flush()
	if !strings.Contains(out.String(), "event: error\n") || !strings.Contains(out.String(), `"type":"api_error"`) {
		t.Fatalf("client got %q, want Anthropic's error event", out.String())
	}
	if s.panics.Load() != 1 || !strings.Contains(logs.String(), "BUG: panic in stream writer") {
		t.Fatalf("panics %d, log %q", s.panics.Load(), logs.String())
	}
	if strings.Contains(logs.String(), "sk-") {
		t.Fatalf("log holds a secret: %q", logs.String())
	}
	s.panics.Store(0)
	waitIdle(t, s)
	// The body relay of a non-streamed answer recovers too.
	size, _ = s.admit(&ctx, rt.dialect)
	x = acquireExchange(s, &ctx, rt, nil, size)
	x.upResp.SetBodyStream(panicReader{}, -1)
	if _, err := x.pass.Read(make([]byte, 10)); err != errPanic {
		t.Fatalf("passBody.Read after a panic: %v", err)
	}
	x.pass.Close()
	s.panics.Store(0)
	waitIdle(t, s)
	// The server still serves.
	if status, _, _ := post(t, base+"/v1/chat/completions", `{"model":"gpt-4o","messages":[]}`); status != 200 {
		t.Fatalf("status %d after the panic", status)
	}
}

type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("injected") }

// TestAccessLogAfterClientWriteError runs streams whose clients hang up
// mid-stream with the access log on (run it under -race): the log line is
// built from what the exchange copied, never from a RequestCtx fasthttp
// may already have recycled.
func TestAccessLogAfterClientWriteError(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 2000; i++ {
			if _, err := fmt.Fprintf(w, anthEvent, i); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
		}
	}))
	var logs testkit.Buffer
	cfg := parseConfig(t, sameConfig, up.URL)
	cfg.Log.Access = true
	base, s := serveConfigServer(t, cfg, &logs)
	body := `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`
	for i := 0; i < 5; i++ {
		conn := rawhttp.Dial(t, base)
		fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		br := bufio.NewReader(conn)
		for n := 0; n < 3; {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "event:") {
				n++
			}
		}
		conn.(*net.TCPConn).SetLinger(0) // a reset: the next write fails at once
		conn.Close()
	}
	waitIdle(t, s)
	if got := strings.Count(logs.String(), `route=/v1/messages dialect=anthropic provider=anth credential=key#0 model=claude-x upstream_model=claude-x stream=true status=200 result=client_gone`); got != 5 {
		t.Fatalf("%d client_gone lines in %q", got, logs.String())
	}
}
