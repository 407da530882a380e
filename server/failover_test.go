package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// credUpstream is a stub provider that answers per credential: answer
// returns the status (0: 200 with the dialect's reply for the path) and
// extra headers. It records the credentials it saw, in order.
type credUpstream struct {
	mu     sync.Mutex
	seen   []string
	answer func(cred string, n int) (status int, hdr map[string]string)
}

func (u *credUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	cred := r.Header.Get("X-Api-Key") + r.Header.Get("X-Goog-Api-Key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	u.mu.Lock()
	u.seen = append(u.seen, cred)
	n := len(u.seen)
	u.mu.Unlock()
	status, hdr := 0, map[string]string(nil)
	if u.answer != nil {
		status, hdr = u.answer(cred, n)
	}
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	if status != 0 && status != 200 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"type":"x","message":"stub %d"}}`, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, replyFor(r.URL.Path))
}

func (u *credUpstream) creds() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return strings.Join(u.seen, " ")
}

func replyFor(path string) string {
	switch {
	case strings.HasSuffix(path, "/messages"):
		return anthropicReply
	case strings.HasSuffix(path, "/chat/completions"):
		return chatReply
	case strings.HasSuffix(path, "/responses"):
		return responsesReply
	}
	return geminiReply
}

// fakeClock is an injectable clock for cooldown tests.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func startClockServer(t *testing.T, yml string, clock *fakeClock) string {
	t.Helper()
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	clock.ns.Store(time.Unix(1767225600, 0).UnixNano())
	s, err := New(cfg, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, s, ln)
}

var dialectCases = []struct {
	d      codec.Dialect
	name   string
	kind   string // provider kind and api
	suffix string // base URL suffix
	body   string
	path   string
	shape  string // gjson path that a success body has
}{
	{codec.DialectAnthropic, "anthropic", "kind: anthropic", "", `{"model":"m1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]%s}`, "/v1/messages", "content.0.text"},
	{codec.DialectChat, "chat", "kind: openai, api: chat", "/v1", `{"model":"m1","messages":[{"role":"user","content":"hi"}]%s}`, "/v1/chat/completions", "choices.0.message"},
	{codec.DialectResponses, "responses", "kind: openai, api: responses", "/v1", `{"model":"m1","input":"hi"%s}`, "/v1/responses", "output.0"},
	{codec.DialectGemini, "gemini", "kind: gemini", "", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]%s}`, "/v1beta/models/m1:generateContent", "candidates.0"},
}

func clientRequest(i int, stream bool) (path, body string) {
	c := dialectCases[i]
	extra := ""
	if stream && c.d != codec.DialectGemini {
		extra = `,"stream":true`
	}
	path = c.path
	if stream && c.d == codec.DialectGemini {
		path = "/v1beta/models/m1:streamGenerateContent?alt=sse"
	}
	return path, fmt.Sprintf(c.body, extra)
}

// TestFailoverRevokedKey: with keys ["sk-revoked","sk-right"] every
// request succeeds, in every dialect; the revoked key is tried once and
// then rests.
func TestFailoverRevokedKey(t *testing.T) {
	t.Parallel()
	for i, c := range dialectCases {
		t.Run(c.name, func(t *testing.T) {
			up := &credUpstream{answer: func(cred string, _ int) (int, map[string]string) {
				if cred == "sk-revoked" {
					return 401, nil
				}
				return 0, nil
			}}
			u := newUpstream(t, up)
			base, _ := startServer(t, fmt.Sprintf("providers:\n  - {name: p, %s, base_url: %q, keys: [sk-revoked, sk-right], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", c.kind, u.URL+c.suffix), "")
			path, body := clientRequest(i, false)
			for n := 0; n < 8; n++ {
				if status, _, b := post(t, base+path, body); status != 200 || !gjson.GetBytes(b, c.shape).Exists() {
					t.Fatalf("request %d: %d %s", n, status, b)
				}
			}
			if got := up.creds(); strings.Count(got, "sk-revoked") != 1 || strings.Count(got, "sk-right") != 8 {
				t.Fatalf("credentials used: %s", got)
			}
		})
	}
}

// TestCooldownRetryAfter: a credential answering 429 with Retry-After: 2
// rests 2 s (on slipstream's clock) and is used again after.
func TestCooldownRetryAfter(t *testing.T) {
	t.Parallel()
	var limited atomic.Bool
	limited.Store(true)
	up := &credUpstream{answer: func(cred string, _ int) (int, map[string]string) {
		if cred == "a" && limited.Swap(false) {
			return 429, map[string]string{"Retry-After": "2"}
		}
		return 0, nil
	}}
	u := newUpstream(t, up)
	clock := &fakeClock{}
	base := startClockServer(t, "providers:\n  - {name: o, kind: openai, strategy: fill-first, base_url: \""+u.URL+"/v1\", keys: [a, b], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", clock)
	path, body := clientRequest(1, false)
	send := func() {
		t.Helper()
		if status, _, b := post(t, base+path, body); status != 200 {
			t.Fatalf("%d %s", status, b)
		}
	}
	send()                                 // a: 429, then b
	clock.advance(1900 * time.Millisecond) // a still rests
	send()
	clock.advance(200 * time.Millisecond) // 2.1 s: a is back
	send()
	if got := up.creds(); got != "a b b a" {
		t.Fatalf("credentials used: %q, want \"a b b a\"", got)
	}
}

// TestFailoverAcrossProviders: a provider failing before its first byte
// (503) hands the request to a second provider serving the model, in
// every pair of client and provider dialects; the client sees one clean
// response in its own dialect.
func TestFailoverAcrossProviders(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 503, nil }}
	good := &credUpstream{}
	ub, ug := newUpstream(t, bad), newUpstream(t, good)
	for ci, c := range dialectCases {
		for _, p := range dialectCases {
			t.Run(c.name+"_to_"+p.name, func(t *testing.T) {
				yml := fmt.Sprintf("providers:\n  - {name: bad, %s, base_url: %q, keys: [kb], models: [m1]}\n  - {name: good, %s, base_url: %q, keys: [kg], models: [m1]}\ntimeouts: {keepalive: 0s}\n",
					c.kind, ub.URL+c.suffix, p.kind, ug.URL+p.suffix)
				base, _ := startServer(t, yml, "")
				path, body := clientRequest(ci, false)
				status, _, b := post(t, base+path, body)
				if status != 200 || !gjson.GetBytes(b, c.shape).Exists() {
					t.Fatalf("%d %s", status, b)
				}
			})
		}
	}
}

// TestFailoverStreamWithKeepalive: a streamed request fails over on the
// keep-alive path (the attempts run beside the ping timer).
func TestFailoverStreamWithKeepalive(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 500, nil }}
	ub := newUpstream(t, bad)
	rc := sameRoutes["anthropic"]
	good := newUpstream(t, &recorder{contentType: "text/event-stream", reply: rc.stream})
	yml := fmt.Sprintf("providers:\n  - {name: bad, kind: anthropic, base_url: %q, keys: [kb], models: [\"claude-*\"]}\n  - {name: good, kind: anthropic, base_url: %q, keys: [kg], models: [\"claude-*\"]}\ntimeouts: {keepalive: 1s}\n", ub.URL, good.URL)
	base, _ := startServer(t, yml, "")
	status, _, b := post(t, base+rc.path, fmt.Sprintf(rc.body, "true"))
	if status != 200 || string(b) != rc.stream {
		t.Fatalf("%d %q", status, b)
	}
}

// TestNoFailoverAfterFirstByte: a stream that breaks after its first
// event ends with the dialect's error event; no second provider is tried.
func TestNoFailoverAfterFirstByte(t *testing.T) {
	t.Parallel()
	broken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	ub := newUpstream(t, broken)
	good := &credUpstream{}
	ug := newUpstream(t, good)
	yml := fmt.Sprintf("providers:\n  - {name: bad, kind: anthropic, base_url: %q, keys: [kb], models: [m1]}\n  - {name: good, kind: anthropic, base_url: %q, keys: [kg], models: [m1]}\ntimeouts: {keepalive: 0s}\n", ub.URL, ug.URL)
	base, _ := startServer(t, yml, "")
	path, body := clientRequest(0, true)
	status, _, b := post(t, base+path, body)
	if status != 200 || !strings.Contains(string(b), "message_start") || !strings.Contains(string(b), "event: error") {
		t.Fatalf("%d %q", status, b)
	}
	if good.creds() != "" {
		t.Fatalf("failed over after the first byte: %q", good.creds())
	}
}

// TestAllCooling: when every candidate rests, the client gets 429 with
// Retry-After at the soonest recovery, in its dialect, and no upstream
// call is made.
func TestAllCooling(t *testing.T) {
	t.Parallel()
	up := &credUpstream{answer: func(string, int) (int, map[string]string) {
		return 429, map[string]string{"Retry-After": "30"}
	}}
	u := newUpstream(t, up)
	for i, c := range dialectCases {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{}
			base := startClockServer(t, fmt.Sprintf("providers:\n  - {name: p, %s, base_url: %q, keys: [a, b], models: [m1]}\ntimeouts: {keepalive: 0s}\n", c.kind, u.URL+c.suffix), clock)
			path, body := clientRequest(i, false)
			if status, h, _ := post(t, base+path, body); status != 429 || h.Get("Retry-After") != "30" {
				t.Fatalf("first: %d retry-after %q", status, h.Get("Retry-After"))
			}
			before := up.creds()
			clock.advance(10 * time.Second)
			status, h, b := post(t, base+path, body)
			if status != 429 || h.Get("Retry-After") != "20" {
				t.Fatalf("all cooling: %d retry-after %q %s", status, h.Get("Retry-After"), b)
			}
			shape := "openai"
			switch c.d {
			case codec.DialectAnthropic:
				shape = "anthropic"
			case codec.DialectGemini:
				shape = "gemini"
			}
			checkShape(t, shape, b)
			if up.creds() != before {
				t.Fatal("an upstream call was made while every credential rests")
			}
		})
	}
}

// TestAffinity: one conversation stays on one credential over 20
// requests; requests without a session spread round-robin.
func TestAffinity(t *testing.T) {
	t.Parallel()
	up := &credUpstream{}
	u := newUpstream(t, up)
	base, _ := startServer(t, "providers:\n  - {name: a, kind: anthropic, affinity: true, base_url: \"${UP}\", keys: [k1, k2, k3], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", u.URL)
	path, body := clientRequest(0, false)
	for i := 0; i < 20; i++ {
		if status, _, b := post(t, base+path, body, "X-Claude-Code-Session-Id", "session-1"); status != 200 {
			t.Fatalf("%d %s", status, b)
		}
	}
	first := strings.Fields(up.creds())
	for _, c := range first {
		if c != first[0] {
			t.Fatalf("session moved between credentials: %v", first)
		}
	}
	withMeta := `{"model":"m1","max_tokens":16,"metadata":{"user_id":"user_abc_session_42"},"messages":[{"role":"user","content":"hi"}]}`
	for i := 0; i < 20; i++ {
		post(t, base+path, withMeta)
	}
	meta := strings.Fields(up.creds())[20:]
	for _, c := range meta {
		if c != meta[0] {
			t.Fatalf("metadata.user_id session moved: %v", meta)
		}
	}
	for i := 0; i < 6; i++ {
		post(t, base+path, body)
	}
	spread := map[string]int{}
	for _, c := range strings.Fields(up.creds())[40:] {
		spread[c]++
	}
	if len(spread) != 3 {
		t.Fatalf("requests without a session did not spread: %v", spread)
	}
}

// TestForeignReplayTokensDropped: a same-dialect Anthropic request that
// replays a thinking block Gemini signed (tagged by slipstream when it
// translated that turn) reaches Anthropic without it, its own block kept;
// a request without tags goes up byte for byte.
func TestForeignReplayTokensDropped(t *testing.T) {
	t.Parallel()
	rec := &recorder{reply: anthropicReply}
	u := newUpstream(t, rec)
	yml := "providers:\n  - {name: a, kind: anthropic, base_url: \"${UP}\", keys: [k], models: [\"claude-*\"]}\n  - {name: g, kind: gemini, base_url: \"${UP}\", keys: [k], models: [\"gemini-*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(t, yml, u.URL)
	body := `{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t1","signature":"QW50aHJvcGljU2ln"},{"type":"thinking","thinking":"t2","signature":"SsOrGemiR2VtaW5pU2ln"},{"type":"text","text":"answer"}]},{"role":"user","content":"more"}]}`
	if status, _, b := post(t, base+"/v1/messages", body); status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	got, _, _ := rec.last()
	if strings.Contains(string(got), "R2VtaW5pU2ln") || !strings.Contains(string(got), `"signature":"QW50aHJvcGljU2ln"`) {
		t.Fatalf("upstream got %s", got)
	}
	plain := strings.Replace(body, "SsOrGemi", "", 1)
	post(t, base+"/v1/messages", plain)
	if got, _, _ := rec.last(); string(got) != plain {
		t.Fatalf("an untagged body was rewritten: %s", got)
	}
}

const geminiSSE = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hi\"}]},\"index\":0}],\"modelVersion\":\"m1\",\"responseId\":\"r1\"}\n\n" +
	"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\" there\"}]},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":2,\"candidatesTokenCount\":2,\"totalTokenCount\":4},\"modelVersion\":\"m1\",\"responseId\":\"r1\"}\n\n"

// sseByPath answers every call with its dialect's stream.
var sseByPath = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/messages"):
		io.WriteString(w, sameRoutes["anthropic"].stream)
	case strings.HasSuffix(p, "/chat/completions"):
		io.WriteString(w, sameRoutes["chat"].stream)
	case strings.HasSuffix(p, "/responses"):
		io.WriteString(w, sameRoutes["responses"].stream)
	default:
		io.WriteString(w, geminiSSE)
	}
})

// TestFailoverAcrossProvidersStreamed is TestFailoverAcrossProviders for
// streamed requests: the client's stream is one clean stream in its own
// dialect, ending with its terminal event.
func TestFailoverAcrossProvidersStreamed(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 529, nil }}
	ub, ug := newUpstream(t, bad), newUpstream(t, sseByPath)
	terminal := map[codec.Dialect]string{
		codec.DialectAnthropic: "event: message_stop", codec.DialectChat: "data: [DONE]",
		codec.DialectResponses: "response.completed", codec.DialectGemini: `"finishReason":"STOP"`,
	}
	for ci, c := range dialectCases {
		for _, p := range dialectCases {
			t.Run(c.name+"_to_"+p.name, func(t *testing.T) {
				yml := fmt.Sprintf("providers:\n  - {name: bad, %s, base_url: %q, keys: [kb], models: [m1]}\n  - {name: good, %s, base_url: %q, keys: [kg], models: [m1]}\ntimeouts: {keepalive: 0s}\n",
					c.kind, ub.URL+c.suffix, p.kind, ug.URL+p.suffix)
				base, _ := startServer(t, yml, "")
				path, body := clientRequest(ci, true)
				status, h, b := post(t, base+path, body)
				if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(b), terminal[c.d]) || strings.Contains(string(b), "event: error") || strings.Contains(string(b), `"error":{`) {
					t.Fatalf("%d %s %q", status, h.Get("Content-Type"), b)
				}
			})
		}
	}
}

// TestFallbackChain: when every provider of a model fails, the request
// follows the model's fallbacks (another vendor and model, translated).
func TestFallbackChain(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 500, nil }}
	good := &recorder{reply: chatReply}
	ub, ug := newUpstream(t, bad), newUpstream(t, good)
	yml := fmt.Sprintf(`providers:
  - {name: anth, kind: anthropic, base_url: %q, keys: [a1, a2], models: ["claude-*"]}
  - {name: openai, kind: openai, base_url: %q, keys: [o1], models: ["gpt-*"]}
fallbacks:
  claude-opus-4-8: [openai/gpt-5.5]
timeouts: {keepalive: 0s}
`, ub.URL, ug.URL+"/v1")
	base, _ := startServer(t, yml, "")
	status, _, b := post(t, base+"/v1/messages", `{"model":"claude-opus-4-8","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || gjson.GetBytes(b, "type").Str != "message" {
		t.Fatalf("%d %s", status, b)
	}
	got, _, _ := good.last()
	if gjson.GetBytes(got, "model").Str != "gpt-5.5" {
		t.Fatalf("fallback request: %s", got)
	}
	if bad.creds() != "a1 a2" {
		t.Fatalf("anthropic credentials tried: %q", bad.creds())
	}
	// Bounded: with max_attempts 1 the client sees the first failure.
	yml1 := strings.Replace(yml, "timeouts:", "failover: {max_attempts: 1}\ntimeouts:", 1)
	base1, _ := startServer(t, yml1, "")
	if status, _, _ := post(t, base1+"/v1/messages", `{"model":"claude-opus-4-8","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`); status != 500 {
		t.Fatalf("max_attempts 1: %d", status)
	}
}

// TestNoFailoverForDepartedClient: a client that hangs up while the first
// attempt runs behind keep-alive pings gets no further attempt made for it.
func TestNoFailoverForDepartedClient(t *testing.T) {
	t.Parallel()
	slowBad := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(1200 * time.Millisecond)
		w.WriteHeader(503)
	})
	good := &credUpstream{}
	ub, ug := newUpstream(t, slowBad), newUpstream(t, good)
	yml := fmt.Sprintf("providers:\n  - {name: bad, kind: anthropic, base_url: %q, keys: [kb], models: [m1]}\n  - {name: good, kind: anthropic, base_url: %q, keys: [kg], models: [m1]}\ntimeouts: {keepalive: 200ms}\nlog: {access: true}\n", ub.URL, ug.URL)
	var logs testkit.Buffer // the access-log line: the exchange is over, every attempt made
	base := serveConfig(t, parseConfig(t, yml, ""), &logs)
	_, body := clientRequest(0, true)
	c := rawhttp.Dial(t, base)
	fmt.Fprintf(c, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	buf := make([]byte, 4096)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := c.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "200") {
		t.Fatalf("no committed stream: %q %v", buf[:n], err)
	}
	c.Close()
	testkit.WaitFor(t, 5*time.Second, "the access-log line of the departed client's request", func() bool {
		return strings.Contains(logs.String(), "status=")
	})
	if got := good.creds(); got != "" {
		t.Fatalf("failed over for a client that left: %q", got)
	}
}

// TestAffinityCodex: Codex's prompt_cache_key, or its session_id header,
// keeps a conversation on one credential.
func TestAffinityCodex(t *testing.T) {
	t.Parallel()
	up := &credUpstream{}
	u := newUpstream(t, up)
	base, _ := startServer(t, "providers:\n  - {name: r, kind: openai, api: responses, affinity: true, base_url: \"${UP}/v1\", keys: [k1, k2, k3, k4], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", u.URL)
	f := func(body string, headers ...string) {
		t.Helper()
		before := len(strings.Fields(up.creds()))
		for i := 0; i < 20; i++ {
			if status, _, b := post(t, base+"/v1/responses", body, headers...); status != 200 {
				t.Fatalf("%d %s", status, b)
			}
		}
		got := strings.Fields(up.creds())[before:]
		for _, c := range got {
			if c != got[0] {
				t.Fatalf("conversation moved: %v", got)
			}
		}
	}
	f(`{"model":"gpt-5","input":"hi","prompt_cache_key":"thread-7f3a"}`)
	f(`{"model":"gpt-5","input":"hi"}`, "Session_id", "0199-codex-session")
}

// TestUsageAfterFailoverToSameDialect: a request that failed on a
// translated provider and was answered by a same-dialect one reports the
// answering provider's usage, and its credential and attempts.
func TestUsageAfterFailoverToSameDialect(t *testing.T) {
	t.Parallel()
	bad := &credUpstream{answer: func(string, int) (int, map[string]string) { return 503, nil }}
	ub, ug := newUpstream(t, bad), newUpstream(t, &recorder{reply: anthropicReply})
	yml := fmt.Sprintf(`providers:
  - {name: chat, kind: openai, base_url: %q, keys: [kc], models: [m1]}
  - {name: anth, kind: anthropic, base_url: %q, keys: [{key: ka, name: team}], models: [m2]}
fallbacks: {m1: [anth/m2]}
timeouts: {keepalive: 0s}
log: {access: true, format: json}
`, ub.URL+"/v1", ug.URL)
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml, ""), &logs)
	path, body := clientRequest(0, false)
	status, h, b := post(t, base+path, body)
	if status != 200 {
		t.Fatalf("%d %s", status, b)
	}
	line := waitLogLine(t, &logs, h.Get(requestIDHeader))
	if line["input_tokens"] != 2900.0 || line["output_tokens"] != 12.0 || line["credential"] != "team" || line["attempts"] != 2.0 || line["provider"] != "anth" {
		t.Fatalf("access log line %v", line)
	}
}

// TestUnreachableProviderRestsWhole: a provider that refuses connections
// is down for every credential: the request moves to the next provider at
// once, and later requests skip it while it rests.
func TestUnreachableProviderRestsWhole(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	ug := newUpstream(t, &recorder{reply: anthropicReply})
	yml := fmt.Sprintf("providers:\n  - {name: dead, kind: anthropic, base_url: %q, keys: [k1, k2, k3], models: [m1]}\n  - {name: good, kind: anthropic, base_url: %q, keys: [kg], models: [m1]}\ntimeouts: {keepalive: 0s}\nlog: {access: true, format: json}\n", dead, ug.URL)
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml, ""), &logs)
	path, body := clientRequest(0, false)
	for i, want := range []float64{2, 1, 1} {
		status, h, b := post(t, base+path, body)
		if status != 200 {
			t.Fatalf("request %d: %d %s", i, status, b)
		}
		if line := waitLogLine(t, &logs, h.Get(requestIDHeader)); line["attempts"] != want || line["provider"] != "good" {
			t.Fatalf("request %d: %v", i, line)
		}
	}
}
