package server

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
)

// rawExchange writes req on a fresh connection and returns everything the
// server sends until it closes the connection or goes quiet for wait.
func rawExchange(t *testing.T, base, req string, wait time.Duration) string {
	t.Helper()
	c := rawhttp.Dial(t, base)
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(wait))
	b, _ := io.ReadAll(bufio.NewReader(c))
	return string(b)
}

const secretConfig = `
keys:
  - {name: dev, key: sk-client-secret-0123456789}
providers:
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [sk-upstream-secret], models: ["claude-*"]}
  - {name: gem, kind: gemini, base_url: "${UP}", keys: [sk-upstream-secret], models: ["gemini-*"]}
timeouts:
  keepalive: 0s
log:
  access: true
`

// TestMalformedRequestLeaksNoKey: a request fasthttp cannot parse gets a
// short generic 400; neither the answer nor the log repeats the request
// head and its Authorization.
func TestMalformedRequestLeaksNoKey(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	var logs testkit.Buffer
	base, _ := serveConfigServer(t, parseConfig(t, secretConfig, up.URL), &logs)
	for _, req := range []string{
		"POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-client-secret-0123456789\r\nContent-Length: 5, 6\r\n\r\nhello",
		"POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nx-api-key: sk-client-secret-0123456789\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nx-api-key: sk-client-secret-0123456789\r\nBad Header\r\n\r\n",
	} {
		got := rawExchange(t, base, req, 2*time.Second)
		if !strings.HasPrefix(got, "HTTP/1.1 400 ") {
			t.Fatalf("answer to %q: %q", req, got)
		}
		if strings.Contains(got, "sk-client") || strings.Contains(got, "Authorization") {
			t.Fatalf("the answer repeats the request: %q", got)
		}
		if !strings.Contains(got, `"type":"error"`) {
			t.Fatalf("not in Anthropic's error shape: %q", got)
		}
	}
	time.Sleep(50 * time.Millisecond) // fasthttp logs after the connection ends
	if l := logs.String(); strings.Contains(l, "sk-client") || strings.Contains(l, "Authorization") {
		t.Fatalf("the log repeats the request: %q", l)
	}
}

// TestLogLinesCannotBeForged: client-chosen values (the path, the model)
// are quoted in the access log, so a %0a in a path or a newline in a model
// name cannot start a line of the attacker's.
func TestLogLinesCannotBeForged(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: geminiReply})
	var logs testkit.Buffer
	base, _ := serveConfigServer(t, parseConfig(t, secretConfig, up.URL), &logs)
	auth := "x-goog-api-key: sk-client-secret-0123456789\r\n"
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	for _, path := range []string{
		"/v1beta/models/gemini-x%0a2026/01/01%2000.00.00.000000%20FORGED:generateContent",
		"/v1beta/models/gemini-x%0d%0aFORGED:generateContent",
	} {
		req := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
		rawExchange(t, base, req, 2*time.Second)
	}
	anth := `{"model":"claude-x\nFORGED","max_tokens":1,"messages":[]}`
	rawExchange(t, base, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+auth+"Connection: close\r\nContent-Length: "+itoa(len(anth))+"\r\n\r\n"+anth, 2*time.Second)
	testkit.WaitFor(t, 5*time.Second, "three access-log lines", func() bool { return strings.Count(logs.String(), "\n") >= 3 })
	line := regexp.MustCompile(`^time=\S+ level=INFO id=[0-9a-f]{8}-[0-9a-f]{11} `)
	l := strings.TrimSuffix(logs.String(), "\n")
	if strings.Count(l, "\n") != 2 {
		t.Fatalf("expected three access-log lines, got %q", l)
	}
	for _, ln := range strings.Split(l, "\n") {
		if !line.MatchString(ln) {
			t.Fatalf("a log line the server did not start: %q (log %q)", ln, l)
		}
	}
	if strings.Contains(l, "\nFORGED") || strings.Contains(l, "\n2026/01/01") {
		t.Fatalf("a client's newline reached the log: %q", l)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
