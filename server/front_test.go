package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
	"slipstream/server/config"
)

// frontConfig is the no-key loopback default, the set-up a web page
// would attack.
const frontConfig = `
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [k], models: ["claude-*"]}
  - {name: oai, kind: openai, base_url: "${UP}", keys: [k], models: ["gpt-*"]}
timeouts:
  keepalive: 0s
`

const frontBody = `{"model":"claude-x","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`

func upstreamCalls(up *recorder) int {
	up.mu.Lock()
	defer up.mu.Unlock()
	return len(up.bodies)
}

// TestCrossSitePostIsRefused: a page's cross-origin POST (text/plain, the
// kind a browser sends without a preflight) is refused, and so is one
// declared JSON from an origin not listed; the provider sees neither. A
// POST that is not JSON is a 415 even without an Origin.
func TestCrossSitePostIsRefused(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, frontConfig, up.URL)
	f := func(want int, headers ...string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(frontBody))
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%v: %d, want %d", headers, resp.StatusCode, want)
		}
		if want != 200 && resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%v: a refusal carries CORS headers", headers)
		}
	}
	f(403, "Origin", "https://evil.example", "Content-Type", "text/plain")
	f(403, "Origin", "https://evil.example", "Content-Type", "application/json")
	f(403, "Origin", "null", "Content-Type", "application/json")
	f(415, "Content-Type", "text/plain;charset=UTF-8")
	f(415, "Content-Type", "application/x-www-form-urlencoded")
	f(415)
	if n := upstreamCalls(rec); n != 0 {
		t.Fatalf("the upstream was called %d times", n)
	}
	f(200, "Content-Type", "application/json; charset=utf-8")
}

// TestRebindingHostIsRefused: a page that rebinds its own name to
// 127.0.0.1 sends that name as Host; it is refused for HTTP and for the
// WebSocket upgrade. Loopback names, IP literals and allowed_hosts pass.
func TestRebindingHostIsRefused(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, frontConfig, up.URL)
	post := func(host string) string {
		t.Helper()
		req := "POST /v1/messages HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(frontBody)) + "\r\n\r\n" + frontBody
		out := rawExchange(t, base, req, 5*time.Second)
		status, _, _ := strings.Cut(out, "\r\n")
		return status
	}
	for _, host := range []string{"evil.example:8317", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io:8317", "proxy.internal"} {
		if got := post(host); got != "HTTP/1.1 403 Forbidden" {
			t.Fatalf("Host %s: %q", host, got)
		}
	}
	upgrade := rawhttp.Upgrade("/v1/responses", "Host", "evil.example:8317")
	if out := rawExchange(t, base, upgrade, 5*time.Second); !strings.HasPrefix(out, "HTTP/1.1 403 Forbidden") {
		t.Fatalf("WebSocket upgrade with a foreign Host: %q", out)
	}
	if n := upstreamCalls(rec); n != 0 {
		t.Fatalf("the upstream was called %d times", n)
	}
	base, _ = startServer(t, frontConfig+"allowed_hosts: [proxy.internal, \"*.corp.example\"]\n", up.URL)
	if got := post("corp.example"); got != "HTTP/1.1 403 Forbidden" {
		t.Fatalf("Host corp.example with *.corp.example listed: %q", got)
	}
	for _, host := range []string{"localhost:8317", "LOCALHOST", "app.localhost:1", "127.0.0.1", "127.1.2.3:8317", "[::1]:8317", "192.168.1.20:8317", "proxy.internal:8317", "a.corp.example"} {
		if got := post(host); got != "HTTP/1.1 200 OK" {
			t.Fatalf("Host %s: %q", host, got)
		}
	}
	if out := rawExchange(t, base, strings.Replace(upgrade, "evil.example", "localhost", 1), time.Second); !strings.HasPrefix(out, "HTTP/1.1 101") {
		t.Fatalf("WebSocket upgrade with Host localhost: %q", out)
	}
}

// TestListedOriginGetsCORS: an origin in cors.allowed_origins gets its
// preflight answered 204 with methods, headers and max age, and its
// requests the CORS headers; its WebSocket upgrade passes. Others are
// refused, preflight included.
func TestListedOriginGetsCORS(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	up := newUpstream(t, rec)
	base, _ := startServer(t, frontConfig+"cors: {allowed_origins: [\"http://localhost:3000\"]}\n", up.URL)
	preflight := func(origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("OPTIONS", base+"/v1/messages", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-api-key,anthropic-version")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("http://localhost:3000")
	h := resp.Header
	if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		h.Get("Access-Control-Allow-Methods") != "POST" || h.Get("Access-Control-Allow-Headers") != "content-type,x-api-key,anthropic-version" ||
		h.Get("Access-Control-Max-Age") != "600" || !strings.Contains(h.Get("Vary"), "Origin") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, h)
	}
	if resp := preflight("http://localhost:3001"); resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight of an unlisted origin: %d %v", resp.StatusCode, resp.Header)
	}
	status, h, _ := post(t, base+"/v1/messages", frontBody, "Origin", "http://localhost:3000")
	if status != 200 || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || h.Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("listed origin: %d %v", status, h)
	}
	if n := upstreamCalls(rec); n != 1 {
		t.Fatalf("the upstream was called %d times", n)
	}
	upgrade := rawhttp.Upgrade("/v1/responses", "Host", "localhost", "Origin", "http://localhost:3000")
	if out := rawExchange(t, base, upgrade, time.Second); !strings.HasPrefix(out, "HTTP/1.1 101") {
		t.Fatalf("upgrade from a listed origin: %q", out)
	}
	if out := rawExchange(t, base, strings.Replace(upgrade, "3000", "3001", 1), 5*time.Second); !strings.HasPrefix(out, "HTTP/1.1 403") {
		t.Fatalf("upgrade from an unlisted origin: %q", out)
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{AllowedHosts: []string{"Proxy.Internal", "*.corp.example"}}
	fd := newFrontDoor(cfg)
	f := func(host string, want bool) {
		t.Helper()
		if got := fd.hostAllowed([]byte(host)); got != want {
			t.Fatalf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
	f("", true)
	f("localhost", true)
	f("localhost:8317", true)
	f("a.b.localhost:1", true)
	f(".localhost", false)
	f("xlocalhost", false)
	f("localhost.evil.example", false)
	f("127.0.0.1:8317", true)
	f("10.0.0.1", true)
	f("[::1]:8317", true)
	f("[::1]", true)
	f("[127.0.0.1]", false)
	f("::1", false)
	f("[::1]x", false)
	f("127.0.0.1:", false)
	f("127.0.0.1:80:80", false)
	f("1.2.3", false)
	f("evil.example", false)
	f("proxy.internal:80", true)
	f("PROXY.internal", true)
	f("x.corp.example", true)
	f("corp.example", false)
	if fd := newFrontDoor(&config.Config{AllowedHosts: []string{"*"}}); !fd.hostAllowed([]byte("evil.example")) {
		t.Fatal(`allowed_hosts: ["*"] refused a host`)
	}
}

func TestJSONContentType(t *testing.T) {
	t.Parallel()
	f := func(ct string, want bool) {
		t.Helper()
		if got := jsonContentType([]byte(ct)); got != want {
			t.Fatalf("jsonContentType(%q) = %v, want %v", ct, got, want)
		}
	}
	f("application/json", true)
	f("Application/JSON; charset=utf-8", true)
	f(" application/json ;x=y", true)
	f("application/vnd.api+json", true)
	f("application/+json", false)
	f("text/plain", false)
	f("application/jsonx", false)
	f("multipart/form-data; boundary=x", false)
	f("application/x-www-form-urlencoded", false)
	f("", false)
}

// TestHostNamesNote: a listener other hosts can reach logs, at start, that
// requests naming it by a host name need allowed_hosts; a loopback one, or
// one whose names are listed, does not.
func TestHostNamesNote(t *testing.T) {
	t.Parallel()
	f := func(addr, extra string, want bool) {
		t.Helper()
		wantStartupLine(t, addr, extra, "allowed_hosts", want)
	}
	f("0.0.0.0:0", "", true)
	f("127.0.0.1:0", "", false)
	f("0.0.0.0:0", "allowed_hosts: [slipstream.internal]\n", false)
	f("0.0.0.0:0", "allowed_hosts: [\"*\"]\n", false)
}
