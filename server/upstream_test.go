package server

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// upConfig has one provider per upstream dialect, all at ${UP}.
const upConfig = `
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: ["sk-ant-upstream"], models: ["claude-*"]}
  - {name: chat, kind: openai, api: chat, base_url: "${UP}/v1", keys: ["sk-openai-upstream"], models: ["gpt-4*"]}
  - {name: resp, kind: openai, api: responses, base_url: "${UP}/v1", keys: ["sk-openai-upstream"], models: ["gpt-5*"]}
  - {name: gem, kind: gemini, base_url: "${UP}", keys: ["sk-gemini-upstream"], models: ["gemini-*"]}
aliases:
  sonnet: anth/claude-sonnet-4-5-20990101
failover: {max_attempts: 1, server_error: 1ns, unauthorized: 1ns}
timeouts:
  keepalive: 0s
`

// startRealClock runs slipstream like startServer but on the real clock,
// so that the short credential cooldowns of upConfig expire between the
// failing requests of one test. It logs to w (nil: discard).
func startRealClock(t *testing.T, yml, upURL string, w io.Writer) string {
	t.Helper()
	yml = strings.ReplaceAll(yml, "${UP}", upURL)
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	s, err := New(cfg, Options{Log: w})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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

// uriRecorder is an upstream that records the raw request line target of
// each request and answers with a canned JSON body.
type uriRecorder struct {
	mu    sync.Mutex
	uris  []string
	heads []http.Header
	reply string
}

func (u *uriRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	u.uris = append(u.uris, r.RequestURI)
	u.heads = append(u.heads, r.Header.Clone())
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, u.reply)
}

func (u *uriRecorder) last() (string, http.Header) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.uris) == 0 {
		return "", nil
	}
	return u.uris[len(u.uris)-1], u.heads[len(u.heads)-1]
}

func (u *uriRecorder) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.uris)
}

// rawPost sends a request with a raw request target (no client-side
// escaping or normalization) and returns status and body.
func rawPost(t *testing.T, base, target, body string, headers ...string) (int, string) {
	t.Helper()
	c := rawhttp.Dial(t, base)
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", target, len(body))
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", headers[i], headers[i+1])
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

func TestUpstreamQueryForwardsOnlyDefinedParams(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: `{}`}
	up := newUpstream(t, rec)
	base, _ := startServer(t, upConfig, up.URL)
	f := func(target, body, wantURI string) {
		t.Helper()
		n := rec.count()
		status, got := rawPost(t, base, target, body)
		if status != 200 {
			t.Fatalf("%s: status %d: %s", target, status, got)
		}
		uri, _ := rec.last()
		if rec.count() == n {
			uri = ""
		}
		if uri != wantURI {
			t.Fatalf("%s: upstream got %q, want %q", target, uri, wantURI)
		}
	}
	anth := `{"model":"claude-x","max_tokens":1,"messages":[]}`
	f("/v1/messages?key=sk-client-secret", anth, "/v1/messages")
	f("/v1/messages?beta=true", anth, "/v1/messages?beta=true")
	f("/v1/messages?beta=true&key=sk-client-secret&api_key=sk-2&access_token=t", anth, "/v1/messages?beta=true")
	f("/v1/messages?key=sk-client-secret&beta=true", anth, "/v1/messages?beta=true")
	f("/v1/messages?beta=a%20b%26key%3Dsk", anth, "/v1/messages?beta=a+b%26key%3Dsk")
	f("/v1/messages/count_tokens?beta=true&key=sk-client-secret", `{"model":"sonnet","messages":[]}`, "") // counted locally
	f("/v1/chat/completions?key=sk-client-secret&api-version=1", `{"model":"gpt-4","messages":[]}`, "/v1/chat/completions")
	f("/v1/responses?key=sk-client-secret", `{"model":"gpt-5","input":"x"}`, "/v1/responses")
	f("/v1beta/models/gemini-x:generateContent?key=sk-client-secret", `{"contents":[]}`, "/v1beta/models/gemini-x:generateContent")
	f("/v1beta/models/gemini-x:streamGenerateContent?alt=sse&key=sk-client-secret", `{"contents":[]}`, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse")
	// Translated: the client's query never goes up either.
	f("/v1/messages?key=sk-client-secret", `{"model":"gpt-4","max_tokens":1,"messages":[]}`, "/v1/chat/completions")
}

// restartingUpstream serves on one loopback address and can be stopped and
// started again there, closing every connection, as a restarted upstream
// process does.
type restartingUpstream struct {
	addr    string
	srv     *httptest.Server
	handler http.Handler
	idle    time.Duration
	conns   atomic.Int32
}

func (r *restartingUpstream) start(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.srv = httptest.NewUnstartedServer(r.handler)
	r.srv.Listener.Close()
	r.srv.Listener = ln
	r.srv.Config.IdleTimeout = r.idle
	r.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.srv.Start()
}

func (r *restartingUpstream) stop() { r.srv.Close() }

func chatHandler(reply string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	})
}

const chatOK = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`

func TestUpstreamClosesIdleConnections(t *testing.T) {
	t.Parallel()
	// The upstream closes idle connections after 150ms (uvicorn, vLLM and
	// Node do so after 5s): a request 250ms later meets a pooled
	// connection the upstream has closed.
	up := &restartingUpstream{handler: chatHandler(chatOK), idle: 150 * time.Millisecond}
	up.start(t)
	t.Cleanup(up.stop)
	base, _ := startServer(t, upConfig, "http://"+up.addr)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} { // same dialect, translated
		for i := 0; i < 10; i++ {
			body := `{"model":"gpt-4","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`
			status, got := rawPost(t, base, path, body)
			if status != 200 {
				t.Fatalf("%s request %d: status %d: %s", path, i, status, got)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// TestUpstreamRetrySendsTheBuiltBodyAgain: a translated body is given
// back once fasthttp has taken it; a request retried on a fresh
// connection (the pooled one died with the upstream's restart) builds and
// sends it whole again.
func TestUpstreamRetrySendsTheBuiltBodyAgain(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	up := &restartingUpstream{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatOK)
	})}
	up.start(t)
	base, _ := startServer(t, upConfig, "http://"+up.addr)
	body := `{"model":"gpt-4","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`
	for i := 0; i < 4; i++ {
		if status, got := rawPost(t, base, "/v1/messages", body); status != 200 {
			t.Fatalf("request %d: status %d: %s", i, status, got)
		}
		up.stop()
		up.start(t)
	}
	up.stop()
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 4 || !strings.Contains(bodies[0], `"content":"hi"`) {
		t.Fatalf("upstream read %d bodies, first %q", len(bodies), bodies)
	}
	for i, b := range bodies {
		if b != bodies[0] {
			t.Fatalf("body %d differs from the first: %q vs %q", i, b, bodies[0])
		}
	}
	if up.conns.Load() < 4 {
		t.Fatalf("%d upstream connections: the requests were not retried on fresh ones", up.conns.Load())
	}
}

func TestUpstreamRestartsBetweenRequests(t *testing.T) {
	t.Parallel()
	up := &restartingUpstream{handler: chatHandler(chatOK)}
	up.start(t)
	base, _ := startServer(t, upConfig, "http://"+up.addr)
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/chat/completions", `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"/v1/messages", `{"model":"sonnet","max_tokens":1,"messages":[]}`}, // aliased: a spliced body stream, rewound for the retry
	} {
		for i := 0; i < 10; i++ {
			status, got := rawPost(t, base, tc.path, tc.body)
			if status != 200 {
				t.Fatalf("%s request %d: status %d: %s", tc.path, i, status, got)
			}
			up.stop()
			up.start(t)
		}
	}
	up.stop()
}

// oneShotUpstream answers the first request on each connection with reply
// and then misbehaves on the next one with bad, counting requests.
func oneShotUpstream(t *testing.T, reply string, bad func(c net.Conn)) (string, *atomic.Int32) {
	t.Helper()
	var reqs atomic.Int32
	addr := testkit.Serve(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			reqs.Add(1)
			if n > 0 || reply == "" {
				bad(c)
				return
			}
			io.WriteString(c, reply)
		}
	})
	return "http://" + addr, &reqs
}

func TestUpstreamNoRetryAfterResponseBytes(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(chatOK)) + "\r\n\r\n" + chatOK
	// The second request on a connection gets half a status line: the
	// upstream took the request, so it must not be sent again.
	up, reqs := oneShotUpstream(t, ok, func(c net.Conn) { io.WriteString(c, "HTTP/1.1 200") })
	base, _ := startServer(t, upConfig, up)
	body := `{"model":"gpt-4","messages":[]}`
	if status, got := rawPost(t, base, "/v1/chat/completions", body); status != 200 {
		t.Fatalf("first: %d %s", status, got)
	}
	status, got := rawPost(t, base, "/v1/chat/completions", body)
	if status != 502 || reqs.Load() != 2 {
		t.Fatalf("status %d after %d upstream requests (want 502 after 2): %s", status, reqs.Load(), got)
	}
}

func TestUpstreamNoRetryOnFreshConnection(t *testing.T) {
	t.Parallel()
	// Every connection is closed on its first request: a fresh connection
	// that fails says the upstream is failing, and is not retried.
	up, reqs := oneShotUpstream(t, "", func(c net.Conn) {})
	base, _ := startServer(t, upConfig, up)
	status, got := rawPost(t, base, "/v1/chat/completions", `{"model":"gpt-4","messages":[]}`)
	if status != 502 || reqs.Load() != 1 {
		t.Fatalf("status %d after %d upstream requests (want 502 after 1): %s", status, reqs.Load(), got)
	}
}

// fillUpstreamPool starts slipstream with limits.upstream_conns: 2 in
// front of an upstream that holds every request until the test ends, and
// returns once two Chat requests hold both connections: the next request
// (body, on base) meets a full pool.
func fillUpstreamPool(t *testing.T) (base, body string) {
	t.Helper()
	release := make(chan struct{})
	var started atomic.Int32
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		<-release
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatOK)
	}))
	yml := strings.Replace(upConfig, "keepalive: 0s", "keepalive: 0s\n  connect: 300ms\nlimits:\n  upstream_conns: 2", 1)
	base, _ = startServer(t, yml, up.URL)
	t.Cleanup(func() { close(release) }) // runs first: the held requests end before the server shuts down
	body = `{"model":"gpt-4","messages":[]}`
	for i := 0; i < 2; i++ {
		go func() {
			if resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	for started.Load() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	return base, body
}

func TestUpstreamPoolFullIs503(t *testing.T) {
	t.Parallel()
	base, body := fillUpstreamPool(t)
	status, got := rawPost(t, base, "/v1/chat/completions", body)
	if status != 503 || !strings.Contains(got, "limits.upstream_conns") || !strings.Contains(got, "chat") {
		t.Fatalf("status %d: %s", status, got)
	}
	if strings.Contains(got, "unreachable") {
		t.Fatalf("a full pool reported as unreachable: %s", got)
	}
}

func TestUpstreamRepeatedResponseHeadersKept(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Add("Set-Cookie", "a=1; Path=/")
		h.Add("Set-Cookie", "b=2; Path=/")
		h.Add("Vary", "Origin")
		h.Add("Vary", "Accept-Encoding")
		h.Add("X-Multi", "one")
		h.Add("X-Multi", "two")
		io.WriteString(w, chatOK)
	}))
	base, _ := startServer(t, upConfig, up.URL)
	status, hdr, got := post(t, base+"/v1/chat/completions", `{"model":"gpt-4","messages":[]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	for k, n := range map[string]int{"Set-Cookie": 2, "Vary": 2, "X-Multi": 2} {
		if len(hdr.Values(k)) != n {
			t.Fatalf("%s: %q, want %d values", k, hdr.Values(k), n)
		}
	}
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, s)
	zw.Close()
	return b.Bytes()
}

func TestUpstreamCompressedResponses(t *testing.T) {
	t.Parallel()
	var acceptEncoding atomic.Value
	sse := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		acceptEncoding.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip") // whatever was asked
		if bytes.Contains(b, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(gzipped(sse))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(gzipped(chatOK))
	}))
	base := startRealClock(t, upConfig, up.URL, nil)
	noGzip := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	// Same dialect: the bytes are passed on as they came, with their
	// Content-Encoding.
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4","messages":[]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := noGzip.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("body is not the upstream's gzip: %v", err)
	}
	plain, _ := io.ReadAll(zr)
	mustEqual(t, "decoded body", plain, []byte(chatOK))
	if ae, _ := acceptEncoding.Load().(string); ae != "identity" {
		t.Fatalf("upstream asked with Accept-Encoding %q, want identity", ae)
	}

	// Translated: decoded, then translated.
	status, _, got := post(t, base+"/v1/messages", `{"model":"gpt-4","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(string(got), `"text":"Hi"`) {
		t.Fatalf("translated: status %d: %s", status, got)
	}
	// A compressed event stream is decoded to be framed: the client gets
	// plain events, without the upstream's Content-Encoding.
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{"model":"gpt-4","max_tokens":5,"messages":[],"stream":true}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := noGzip.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !strings.Contains(string(got), "Hi") {
			t.Fatalf("%s stream: status %d, Content-Encoding %q: %q", path, resp.StatusCode, resp.Header.Get("Content-Encoding"), got)
		}
		if path == "/v1/chat/completions" && string(got) != sse {
			t.Fatalf("same-dialect stream changed: %q", got)
		}
	}
}

// TestUpstreamUnreadableEncodingIs502: an event stream in an encoding
// slipstream does not decode is a clear 502 in the client's dialect.
func TestUpstreamUnreadableEncodingIs502(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Encoding", "br")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "\x0b\x02\x80data: x\n\n\x03")
	}))
	base := startRealClock(t, upConfig, up.URL, nil)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		status, _, got := post(t, base+path, `{"model":"gpt-4","max_tokens":5,"messages":[],"stream":true}`)
		if status != 502 || !strings.Contains(string(got), "compressed event stream") {
			t.Fatalf("%s stream: status %d: %s", path, status, got)
		}
	}
}

func TestUpstreamFailureNamesCause(t *testing.T) {
	t.Parallel()
	tlsUp := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsUp.Close)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()
	silent, _ := net.Listen("tcp", "127.0.0.1:0")
	t.Cleanup(func() { silent.Close() })
	f := func(upURL, wantClient, wantLog string, wantStatus int) {
		t.Helper()
		yml := strings.Replace(upConfig, "keepalive: 0s", "keepalive: 0s\n  connect: 2s\n  first_byte: 300ms", 1)
		var log testkit.Buffer
		base := startRealClock(t, yml, upURL, &log)
		for _, path := range []string{"/v1/messages", "/v1/chat/completions"} { // translated, same dialect
			status, got := rawPost(t, base, path, `{"model":"gpt-4","max_tokens":1,"messages":[]}`, "Authorization", "Bearer sk-client-secret")
			if status != wantStatus || !strings.Contains(got, "provider chat") || !strings.Contains(got, wantClient) {
				t.Fatalf("%s %s: status %d: %s", upURL, path, status, got)
			}
		}
		l := log.String()
		if !strings.Contains(l, "provider=chat") || !strings.Contains(l, "cause="+wantLog) {
			t.Fatalf("%s: log lacks provider and cause %s:\n%s", upURL, wantLog, l)
		}
		if strings.Contains(l, "sk-") {
			t.Fatalf("log holds a key:\n%s", l)
		}
	}
	f(closed, "connection refused", "refused", 502)
	f("http://upstream.invalid", "DNS", "dns", 502)
	f(tlsUp.URL, "TLS handshake", "tls", 502)
	f("http://"+silent.Addr().String(), "timed out", "timeout", 504)
}

func TestUpstreamWithoutKeySendsNoAuthorization(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: chatOK}
	up := newUpstream(t, rec)
	yml := "providers:\n  - {name: local, kind: openai, base_url: \"${UP}/v1\", models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(t, yml, up.URL)
	status, got := rawPost(t, base, "/v1/chat/completions", `{"model":"llama3","messages":[]}`, "Authorization", "Bearer sk-client-secret")
	if status != 200 {
		t.Fatalf("status %d: %s", status, got)
	}
	if _, h := rec.last(); h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Fatalf("credential header sent to a keyless provider: %v", h)
	}
}

func TestUpstreamConfiguredHeaders(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: chatOK}
	up := newUpstream(t, rec)
	yml := strings.Replace(upConfig, `keys: ["sk-openai-upstream"], models: ["gpt-4*"]}`,
		`keys: ["sk-openai-upstream"], models: ["gpt-4*"], headers: {OpenAI-Organization: org-7, X-Gateway-Auth: gw-s3cret, Authorization: ignored}}`, 1)
	yml = strings.Replace(yml, "providers:", "log: {access: true}\nproviders:", 1)
	yml = strings.ReplaceAll(yml, "${UP}", up.URL)
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	var log testkit.Buffer
	base := serveConfig(t, cfg, &log)
	for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
		status, got := rawPost(t, base, path, `{"model":"gpt-4","max_tokens":1,"messages":[]}`, "X-Gateway-Auth", "from-client")
		if status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		_, h := rec.last()
		if h.Get("OpenAI-Organization") != "org-7" || h.Get("X-Gateway-Auth") != "gw-s3cret" || len(h.Values("X-Gateway-Auth")) != 1 {
			t.Fatalf("%s: configured headers not sent: %v", path, h)
		}
		if h.Get("Authorization") != "Bearer sk-openai-upstream" {
			t.Fatalf("%s: the credential must win over a configured header: %v", path, h)
		}
	}
	if strings.Contains(log.String(), "s3cret") {
		t.Fatalf("a configured header value was logged:\n%s", log.String())
	}
}

// TestGeminiModelSegmentEscaped: a Gemini model from the path either is
// refused or reaches the upstream as one escaped path segment, on the
// generate and the forwarded count routes.
func TestGeminiModelSegmentEscaped(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: `{}`}
	up := newUpstream(t, rec)
	yml := strings.Replace(upConfig, `models: ["gemini-*"]}`, `models: ["gemini-*"], count_tokens: upstream}`, 1)
	base, _ := startServer(t, yml, up.URL)
	f := func(target, wantURI string) {
		t.Helper()
		n := rec.count()
		status, got := rawPost(t, base, target, `{"contents":[]}`)
		if rec.count() == n {
			if status != 400 {
				t.Fatalf("%s: not forwarded, yet status %d: %s", target, status, got)
			}
			return
		}
		if uri, _ := rec.last(); uri != wantURI {
			t.Fatalf("%s reached the upstream as %q, want %q", target, uri, wantURI)
		}
	}
	for _, verb := range []string{"generateContent", "countTokens"} {
		f("/v1beta/models/gemini-x%3Fy=1%23:"+verb, "/v1beta/models/gemini-x%3Fy%3D1%23:"+verb)
		f("/v1beta/models/gemini-x%20y:"+verb, "/v1beta/models/gemini-x%20y:"+verb)
		f("/v1beta/models/gemini-%252e%252e%252f:"+verb, "/v1beta/models/gemini-%252e%252e%252f:"+verb)
		f("/v1beta/models/gemini-2.5-pro:"+verb, "/v1beta/models/gemini-2.5-pro:"+verb)
	}
	f("/v1beta/models/gemini-x%3Fy=1%23:streamGenerateContent?alt=sse", "/v1beta/models/gemini-x%3Fy%3D1%23:streamGenerateContent?alt=sse")
}

func TestGeminiModelPathEscaped(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: `{}`}
	up := newUpstream(t, rec)
	base, _ := startServer(t, upConfig, up.URL)
	bad := func(target string) {
		t.Helper()
		n := rec.count()
		status, got := rawPost(t, base, target, `{"contents":[]}`)
		if status != 400 || !strings.Contains(got, "INVALID_ARGUMENT") {
			t.Fatalf("%s: status %d: %s", target, status, got)
		}
		if rec.count() != n {
			uri, _ := rec.last()
			t.Fatalf("%s reached the upstream as %q", target, uri)
		}
	}
	bad("/v1beta/models/gemini-x%3Fy=1%23:generateContent")
	bad("/v1beta/models/gemini-x%3Fy=1%23:streamGenerateContent?alt=sse")
	bad("/v1beta/models/gemini-x%3Fy=1%23:countTokens")
	bad("/v1beta/models/gemini%20x:generateContent")
	bad("/v1beta/models/gemini-%252e%252e%252f:generateContent")
	bad("/v1beta/models/gemini-..%2F..%2Fv1%2Ffiles:generateContent")
	bad("/v1beta/models/gemini-x%0d%0aX-Injected-1:generateContent")
	bad("/v1beta/models/gemini-x%5C..:generateContent")
	// A good name goes up as it came.
	status, got := rawPost(t, base, "/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[]}`)
	if uri, _ := rec.last(); status != 200 || uri != "/v1beta/models/gemini-2.5-pro:generateContent" {
		t.Fatalf("status %d %s, upstream %q", status, got, uri)
	}
}

// TestGeminiCountTokensPathEscaped checks the forwarded count route.
func TestGeminiCountTokensPathEscaped(t *testing.T) {
	t.Parallel()
	rec := &uriRecorder{reply: `{"totalTokens":1}`}
	up := newUpstream(t, rec)
	yml := strings.Replace(upConfig, `models: ["gemini-*"]}`, `models: ["gemini-*"], count_tokens: upstream}`, 1)
	base, _ := startServer(t, yml, up.URL)
	status, got := rawPost(t, base, "/v1beta/models/gemini-x%3Fy=1%23:countTokens", `{"contents":[]}`)
	if status != 400 {
		uri, _ := rec.last()
		t.Fatalf("status %d %s, upstream %q", status, got, uri)
	}
	status, got = rawPost(t, base, "/v1beta/models/gemini-x:countTokens", `{"contents":[]}`)
	if uri, _ := rec.last(); status != 200 || uri != "/v1beta/models/gemini-x:countTokens" {
		t.Fatalf("status %d %s, upstream %q", status, got, uri)
	}
}

func TestUpstreamCredentialRejected(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		if strings.HasPrefix(r.URL.Path, "/v1/messages") {
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-****gfed"}}`)
			return
		}
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: sk-open****gfed","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	base := startRealClock(t, upConfig, up.URL, nil)
	for _, st := range []int{401, 403} {
		status.Store(int32(st))
		for _, tc := range []struct{ path, body, provider string }{
			{"/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[]}`, "anth"},               // same dialect
			{"/v1/messages", `{"model":"claude-x","max_tokens":1,"messages":[],"stream":true}`, "anth"}, // same dialect, streamed
			{"/v1/chat/completions", `{"model":"gpt-4","messages":[]}`, "chat"},                         // same dialect
			{"/v1/messages", `{"model":"gpt-4","max_tokens":1,"messages":[]}`, "chat"},                  // translated
			{"/v1/messages", `{"model":"gpt-4","max_tokens":1,"messages":[],"stream":true}`, "chat"},    // translated, streamed
			{"/v1/chat/completions", `{"model":"claude-x","messages":[],"stream":true}`, "anth"},        // translated, streamed
		} {
			code, got := rawPost(t, base, tc.path, tc.body, "Authorization", "Bearer sk-client-secret")
			want := "provider " + tc.provider + " rejected its credential"
			if code != st || !strings.Contains(got, want) || strings.Contains(got, "****") {
				t.Fatalf("%d %s %s: status %d: %s", st, tc.path, tc.body, code, got)
			}
			d := "openai"
			if strings.HasPrefix(tc.path, "/v1/messages") {
				d = "anthropic"
			}
			checkShape(t, d, []byte(got))
		}
	}
}

// connectProxy is a loopback HTTP CONNECT proxy that tunnels every target
// to the address to and records the targets asked for.
func connectProxy(t *testing.T, to string) (string, func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var targets []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil || req.Method != http.MethodConnect {
					return
				}
				mu.Lock()
				targets = append(targets, req.Host)
				mu.Unlock()
				up, err := net.Dial("tcp", to)
				if err != nil {
					return
				}
				defer up.Close()
				io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				go io.Copy(up, br)
				io.Copy(c, up)
			}()
		}
	}()
	return "http://" + ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), targets...)
	}
}

func TestUpstreamThroughProxy(t *testing.T) {
	rec := &uriRecorder{reply: chatOK}
	up := newUpstream(t, rec)
	proxyURL, seen := connectProxy(t, strings.TrimPrefix(up.URL, "http://"))
	t.Setenv("HTTP_PROXY", proxyURL)
	t.Setenv("NO_PROXY", "bypass.invalid")
	yml := `
providers:
  - {name: explicit, kind: openai, base_url: "http://explicit.invalid/v1", keys: [k], models: ["gpt-4*"], proxy: "${PROXY}"}
  - {name: env, kind: openai, base_url: "http://env.invalid/v1", keys: [k], models: ["gpt-5*"]}
  - {name: bypass, kind: openai, base_url: "http://bypass.invalid/v1", keys: [k], models: ["o3*"]}
failover: {max_attempts: 1}
timeouts: {keepalive: 0s, connect: 2s}
`
	var log testkit.Buffer
	base := startRealClock(t, strings.ReplaceAll(yml, "${PROXY}", proxyURL), "", &log)
	for _, model := range []string{"gpt-4", "gpt-5"} {
		status, got := rawPost(t, base, "/v1/chat/completions", `{"model":"`+model+`","messages":[]}`)
		if status != 200 {
			t.Fatalf("%s: status %d: %s", model, status, got)
		}
	}
	// NO_PROXY: dialed directly, a DNS failure for a .invalid name.
	status, got := rawPost(t, base, "/v1/chat/completions", `{"model":"o3","messages":[]}`)
	if status != 502 || !strings.Contains(got, "provider bypass is unreachable: DNS") {
		t.Fatalf("bypass: status %d: %s", status, got)
	}
	if s := strings.Join(seen(), ","); s != "explicit.invalid:80,env.invalid:80" {
		t.Fatalf("proxy saw %q", s)
	}
}
