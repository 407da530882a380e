package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"slipstream/internal/oauthstub"
	"slipstream/internal/redistest"
	"slipstream/internal/testkit"
	"slipstream/server/accounts"
	"slipstream/server/config"
)

// acctClock is the injectable clock of the account tests.
type acctClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *acctClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *acctClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// accountRig is slipstream with account providers in front of an OAuth
// stub and an upstream fake.
type accountRig struct {
	t     *testing.T
	stub  *oauthstub.Stub
	dir   string
	clk   *acctClock
	logs  *testkit.Buffer
	base  string
	srv   *Server
	up    *httptest_Server
	calls atomic.Int64
	// answer scripts the upstream per call: nil => a good answer.
	mu     sync.Mutex
	answer func(n int64, account string, w http.ResponseWriter, r *http.Request) bool
	seen   []string // accounts that reached the upstream, in order
	fails  []string // rule violations the upstream saw
}

type httptest_Server = struct {
	URL   string
	Close func()
}

// claudeCodeBody is a Messages request as Claude Code sends it.
const claudeCodeBody = `{"model":"claude-sonnet-4-5","max_tokens":64,"system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude."}],"messages":[{"role":"user","content":"hi"}],"stream":false}`

const claudeAnswer = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`

func newAccountRig(t *testing.T, typ string, names ...string) *accountRig {
	t.Helper()
	f := accounts.DefaultFlow(typ)
	rig := &accountRig{t: t, dir: t.TempDir(), logs: &testkit.Buffer{},
		clk: &acctClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}}
	rig.stub = oauthstub.New(t, f.ClientID, "http://localhost:1/cb", f.JSONToken, f.PKCE)
	mux := http.NewServeMux()
	mux.HandleFunc("/", rig.upstream)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	rig.up = &httptest_Server{URL: "http://" + ln.Addr().String(), Close: func() { hs.Close() }}
	d := accounts.NewDir(rig.dir)
	for _, n := range names {
		at, rt := rig.stub.Issue()
		a := &accounts.Account{Name: n, Type: typ, AccessToken: at, RefreshToken: rt, AccountID: "acct-" + n, ProjectID: "proj-" + n,
			LastRefresh: rig.clk.Now().Add(-time.Hour), Expiry: rig.clk.Now().Add(7 * time.Hour)}
		if err := d.Save(a); err != nil {
			t.Fatal(err)
		}
	}
	return rig
}

// start serves slipstream with one provider of kind over the rig's
// accounts (glob "*").
func (rig *accountRig) start(kind, extra string) { rig.startWith(kind, "", extra) }

// startWith is start with top-level YAML lines top (e.g. redis:).
func (rig *accountRig) startWith(kind, top, extra string) {
	t := rig.t
	typ := config.AccountType(kind)
	yml := fmt.Sprintf(`
listen: 127.0.0.1:0
%s
accounts_dir: %s
accounts:
  oauth:
    %s: {token: %s/token, authorize: %s/authorize}
providers:
  - name: acct
    kind: %s
    base_url: %s
    accounts: ["*"]
    models: ["*"]
%s`, top, rig.dir, typ, rig.stub.URL, rig.stub.URL, kind, rig.up.URL, extra)
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	s, err := New(cfg, Options{Log: rig.logs, Now: rig.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rig.base, rig.srv = serveOn(t, s, ln), s
}

// accountOf names the account an access token belongs to, by reading
// the files (tests only).
func (rig *accountRig) accountOf(tok string) string {
	as, _ := accounts.NewDir(rig.dir).List()
	for _, a := range as {
		if a.AccessToken == tok {
			return a.Name
		}
	}
	return "?"
}

func (rig *accountRig) fail(format string, args ...any) {
	rig.mu.Lock()
	rig.fails = append(rig.fails, fmt.Sprintf(format, args...))
	rig.mu.Unlock()
}

// upstream is the provider fake: it checks what the real backend
// requires of an account's request, then answers (scripted or good).
func (rig *accountRig) upstream(w http.ResponseWriter, r *http.Request) {
	n := rig.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	tok, _ := strings.CutPrefix(auth, "Bearer ")
	if r.Header.Get("X-Api-Key") != "" {
		rig.fail("x-api-key sent to an account upstream")
	}
	if !rig.stub.ValidAccess(tok) {
		w.WriteHeader(401)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired"}}`)
		return
	}
	name := rig.accountOf(tok)
	rig.mu.Lock()
	rig.seen = append(rig.seen, name)
	answer := rig.answer
	rig.mu.Unlock()
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/messages"):
		if !strings.Contains(r.Header.Get("Anthropic-Beta"), "oauth-2025-04-20") {
			rig.fail("anthropic-beta lacks oauth-2025-04-20: %q", r.Header.Get("Anthropic-Beta"))
		}
		if !strings.HasPrefix(r.Header.Get("User-Agent"), "claude-cli/") {
			rig.fail("user-agent %q is not Claude Code's", r.Header.Get("User-Agent"))
		}
		if !bytes.Contains(body, []byte("You are Claude Code")) {
			rig.fail("system prompt is not Claude Code's")
		}
	case r.URL.Path == "/responses":
		if r.Header.Get("Chatgpt-Account-Id") != "acct-"+name {
			rig.fail("chatgpt-account-id %q for %s", r.Header.Get("Chatgpt-Account-Id"), name)
		}
		for _, want := range []string{`"stream":true`, `"store":false`, `"instructions"`} {
			if !bytes.Contains(body, []byte(want)) {
				rig.fail("body lacks %s", want)
			}
		}
		for _, banned := range []string{`"temperature"`, `"max_output_tokens"`, `"top_p"`, `"previous_response_id"`} {
			if bytes.Contains(body, []byte(banned)) {
				rig.fail("body carries %s, which the backend refuses", banned)
			}
		}
	}
	if strings.HasPrefix(r.URL.Path, "/v1internal:") {
		if gjson.GetBytes(body, "project").String() != "proj-"+name || gjson.GetBytes(body, "model").String() == "" || !gjson.GetBytes(body, "request.contents").Exists() {
			rig.fail("not a Code Assist envelope: %s", body)
		}
	}
	if answer != nil && answer(n, name, w, r) {
		return
	}
	switch r.URL.Path {
	case "/v1internal:streamGenerateContent":
		if r.URL.Query().Get("alt") != "sse" {
			rig.fail("stream without alt=sse")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"response\":{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hel\"}]}}]},\"traceId\":\"t1\"}\n\n")
		io.WriteString(w, "data: {\"response\":{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"lo\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":1,\"totalTokenCount\":4},\"modelVersion\":\"gemini-2.5-pro\"},\"traceId\":\"t1\"}\n\n")
		return
	case "/v1internal:generateContent":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"response":{"candidates":[{"content":{"role":"model","parts":[{"text":"hello"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1,"totalTokenCount":4},"modelVersion":"gemini-2.5-pro"},"traceId":"t1"}`)
		return
	}
	if r.URL.Path == "/responses" {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, codexStream)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, claudeAnswer)
}

const codexStream = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1,\"status\":\"in_progress\",\"model\":\"gpt-5-codex\",\"output\":[]}}\n\n" +
	"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m1\",\"output_index\":0,\"content_index\":0,\"delta\":\"hello\"}\n\n" +
	"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"id\":\"m1\",\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"hello\",\"annotations\":[]}]}}\n\n" +
	"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"created_at\":1,\"status\":\"completed\",\"model\":\"gpt-5-codex\",\"output\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1,\"total_tokens\":4}}}\n\n"

const codexBody = `{"model":"gpt-5-codex","instructions":"You are Codex.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"stream":true,"store":false}`

func (rig *accountRig) post(path, body string, hdr ...string) (int, string) {
	rig.t.Helper()
	req, _ := http.NewRequest("POST", rig.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rig.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (rig *accountRig) claude(body string) (int, string) {
	return rig.post("/v1/messages?beta=true", body, "User-Agent", "claude-cli/2.1.197 (external, cli)", "Anthropic-Beta", "claude-code-20250219", "Anthropic-Version", "2023-06-01")
}

func (rig *accountRig) check() {
	rig.t.Helper()
	rig.mu.Lock()
	defer rig.mu.Unlock()
	for _, f := range rig.fails {
		rig.t.Error("upstream saw: " + f)
	}
}

// noSecrets fails when any token or code the stub issued appears in s.
func (rig *accountRig) noSecrets(what, s string) {
	rig.t.Helper()
	for _, sec := range rig.stub.Secrets() {
		if strings.Contains(s, sec) {
			rig.t.Fatalf("%s holds a token or code", what)
		}
	}
}

func TestClaudeAccountServesClaudeCode(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "max1")
	rig.start(config.KindClaudeAccount, "")
	status, body := rig.claude(claudeCodeBody)
	if status != 200 || !strings.Contains(body, "hello") {
		t.Fatalf("status %d body %s", status, body)
	}
	rig.check()
}

func TestClaudeAccountRefusesOtherClients(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "max1")
	rig.start(config.KindClaudeAccount, "")
	status, body := rig.post("/v1/messages", claudeCodeBody, "User-Agent", "python-httpx/0.27")
	if status != 403 || !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "Claude Code") {
		t.Fatalf("a non-Claude-Code client: status %d body %s", status, body)
	}
	status, body = rig.post("/v1/chat/completions", `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}`, "User-Agent", "claude-cli/2.1.197")
	if status != 403 || !strings.Contains(body, `"error":{`) {
		t.Fatalf("a chat client: status %d body %s", status, body)
	}
	if rig.calls.Load() != 0 {
		t.Fatal("a refused request reached the upstream")
	}
}

func TestAccountExpiredTokenRefreshedOnce(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "max1")
	rig.start(config.KindClaudeAccount, "")
	rig.clk.Add(8 * time.Hour) // past expiry
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if status, _ := rig.claude(claudeCodeBody); status != 200 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := rig.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("50 concurrent requests on an expired token made %d refreshes, want 1", n)
	}
	if bad.Load() != 0 {
		t.Fatalf("%d requests failed", bad.Load())
	}
	rig.check()
}

func TestAccount401RefreshesAndRetries(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "max1")
	rig.start(config.KindClaudeAccount, "")
	rig.stub.Revoke() // the provider ends the access token early
	status, body := rig.claude(claudeCodeBody)
	if status != 200 {
		t.Fatalf("status %d body %s", status, body)
	}
	if n := rig.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("refreshes = %d, want 1", n)
	}
	rig.check()
}

func TestClaudeQuotaCoolsAccountCapped(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "a1", "a2")
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		if name != "a1" {
			return false
		}
		reset := rig.clk.Now().Add(3 * 24 * time.Hour).Unix()
		w.Header().Set("Anthropic-Ratelimit-Unified-Status", "rejected")
		w.Header().Set("Anthropic-Ratelimit-Unified-7d-Status", "rejected")
		w.Header().Set("Anthropic-Ratelimit-Unified-7d-Reset", fmt.Sprint(reset))
		w.Header().Set("Anthropic-Ratelimit-Unified-5h-Status", "allowed")
		w.WriteHeader(429)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"usage limit"}}`)
		return true
	}
	rig.start(config.KindClaudeAccount, "    strategy: fill-first\n")
	for range 3 {
		if status, body := rig.claude(claudeCodeBody); status != 200 {
			t.Fatalf("status %d body %s", status, body)
		}
	}
	if got := strings.Join(rig.seen, ","); got != "a1,a2,a2,a2" {
		t.Fatalf("accounts used %s, want a1 once then a2", got)
	}
	a, _ := accounts.NewDir(rig.dir).Load("a1")
	if want := rig.clk.Now().Add(6 * time.Hour); !a.CoolingUntil.Equal(want) {
		t.Fatalf("a1 cools until %v, want the 6 h cap %v", a.CoolingUntil, want)
	}
	// Any model of a1 rests: another model goes to a2 as well.
	rig.seen = nil
	if status, _ := rig.claude(strings.Replace(claudeCodeBody, "claude-sonnet-4-5", "claude-opus-4-8", 1)); status != 200 || rig.seen[0] != "a2" {
		t.Fatalf("another model went to %v", rig.seen)
	}
	// When the cap ends, one probe goes to a1; it succeeds, a1 is back.
	rig.answer = nil
	rig.clk.Add(6*time.Hour + time.Second)
	rig.seen = nil
	rig.claude(claudeCodeBody)
	if rig.seen[0] != "a1" {
		t.Fatalf("no half-open probe of a1: %v", rig.seen)
	}
	a, _ = accounts.NewDir(rig.dir).Load("a1")
	if !a.CoolingUntil.IsZero() {
		t.Fatal("a successful probe must clear the rest")
	}
	rig.check()
}

func TestClaudeBanDisablesAccount(t *testing.T) {
	t.Parallel()
	rig := banRig(t, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"This organization has been disabled."}}`)
	a, _ := accounts.NewDir(rig.dir).Load("a1")
	if !a.Disabled || !strings.Contains(a.DisabledReason, "organization has been disabled") {
		t.Fatalf("a1 not disabled with the provider's message: %+v", a.DisabledReason)
	}
	rig.seen = nil
	rig.claude(claudeCodeBody)
	if strings.Join(rig.seen, ",") != "a2" {
		t.Fatalf("a disabled account was selected: %v", rig.seen)
	}
}

func TestCodexAccountRules(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeCodex, "c1")
	rig.start(config.KindCodexAccount, "")
	status, body := rig.post("/v1/responses", codexBody, "Originator", "codex_cli_rs", "User-Agent", "codex_cli_rs/0.50.0")
	if status != 200 || !strings.Contains(body, "response.completed") {
		t.Fatalf("status %d body %s", status, body)
	}
	status, body = rig.post("/v1/responses", strings.Replace(codexBody, `"store":false`, `"store":true`, 1))
	if status != 400 || !strings.Contains(body, "store") {
		t.Fatalf("store:true: status %d body %s", status, body)
	}
	status, body = rig.post("/v1/responses", strings.Replace(codexBody, `"stream":true`, `"previous_response_id":"resp_0","stream":true`, 1))
	if status != 400 || !strings.Contains(body, "previous_response_id") {
		t.Fatalf("previous_response_id: status %d body %s", status, body)
	}
	// A non-streamed client: the backend streams, slipstream answers
	// with the final response object.
	status, body = rig.post("/v1/responses", strings.Replace(codexBody, `"stream":true`, `"stream":false,"temperature":0.2,"max_output_tokens":100`, 1))
	if status != 200 || !strings.HasPrefix(body, `{"id":"resp_1"`) || !strings.Contains(body, `"text":"hello"`) || strings.Contains(body, "event:") {
		t.Fatalf("non-streamed client: status %d body %s", status, body)
	}
	// Other dialects translate to the account's Responses backend.
	status, body = rig.post("/v1/chat/completions", `{"model":"gpt-5-codex","messages":[{"role":"user","content":"hi"}],"max_tokens":50}`)
	if status != 200 || !strings.Contains(body, `"content":"hello"`) {
		t.Fatalf("chat client: status %d body %s", status, body)
	}
	status, body = rig.post("/v1/chat/completions", `{"model":"gpt-5-codex","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if status != 200 || !strings.Contains(body, `"content":"hello"`) || !strings.Contains(body, "[DONE]") {
		t.Fatalf("streamed chat client: status %d body %s", status, body)
	}
	// A client that leaves store and instructions out (Codex puts its
	// instructions in the input): the backend's required members are
	// added, the rest goes as sent.
	bare := `{"model":"gpt-5-codex","input":[{"type":"message","role":"developer","content":"be brief"}],"stream":true}`
	status, body = rig.post("/v1/responses", bare)
	if status != 200 || !strings.Contains(body, "response.completed") {
		t.Fatalf("bare body: status %d body %s", status, body)
	}
	rig.check()
}

func TestCodexUsageLimitCappedAndProbed(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeCodex, "c1", "c2")
	resetsAt := rig.clk.Now().Add(4 * 24 * time.Hour).Unix()
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		if name != "c1" {
			w.Header().Set("X-Codex-Primary-Used-Percent", "10")
			w.Header().Set("X-Codex-Primary-Window-Minutes", "300")
			w.Header().Set("X-Codex-Secondary-Used-Percent", "20")
			w.Header().Set("X-Codex-Secondary-Window-Minutes", "10080")
			w.Header().Set("X-Codex-Secondary-Reset-After-Seconds", "3600")
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":%d}}`, resetsAt)
		return true
	}
	rig.start(config.KindCodexAccount, "    strategy: fill-first\n")
	status, body := rig.post("/v1/responses", codexBody)
	if status != 200 {
		t.Fatalf("status %d body %s", status, body)
	}
	if got := rig.srv.accts.Cooling("c1"); !got.Equal(rig.clk.Now().Add(6 * time.Hour)) {
		t.Fatalf("c1 cools until %v, want capped at 6 h", got)
	}
	// Still resting 5 h later: c2 serves.
	rig.clk.Add(5 * time.Hour)
	rig.seen = nil
	rig.post("/v1/responses", codexBody)
	if strings.Join(rig.seen, ",") != "c2" {
		t.Fatalf("served by %v during c1's rest", rig.seen)
	}
	// The cap ends long before the stated reset (4 days): one probe goes
	// to c1, which answers again; c1 is back.
	rig.answer = nil
	rig.clk.Add(time.Hour + time.Second)
	rig.seen = nil
	rig.post("/v1/responses", codexBody)
	if strings.Join(rig.seen, ",") != "c1" || !rig.srv.accts.Cooling("c1").IsZero() {
		t.Fatalf("no half-open probe clearing c1: %v, cooling %v", rig.seen, rig.srv.accts.Cooling("c1"))
	}
	rig.check()
}

func TestCodexPassiveHeadersProbeWhenWindowRolls(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeCodex, "c1", "c2")
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		if name != "c1" || n > 1 {
			return false
		}
		w.Header().Set("X-Codex-Primary-Used-Percent", "100")
		w.Header().Set("X-Codex-Primary-Window-Minutes", "300")
		w.Header().Set("X-Codex-Primary-Reset-After-Seconds", "1800")
		w.Header().Set("X-Codex-Limit-Reached", "true")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		fmt.Fprintf(w, `{"error":{"type":"usage_limit_reached","message":"limit","resets_at":%d}}`, rig.clk.Now().Add(3*24*time.Hour).Unix())
		return true
	}
	rig.start(config.KindCodexAccount, "    strategy: fill-first\n")
	rig.post("/v1/responses", codexBody)
	if got := rig.srv.accts.Cooling("c1"); !got.Equal(rig.clk.Now().Add(30 * time.Minute)) {
		t.Fatalf("c1 rests until %v, want the window's roll 30 min on", got)
	}
	rig.clk.Add(31 * time.Minute)
	rig.seen = nil
	rig.post("/v1/responses", codexBody)
	if strings.Join(rig.seen, ",") != "c1" {
		t.Fatalf("no probe when the window rolled: %v", rig.seen)
	}
}

func TestAccountLogsAndListsHoldNoToken(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "a1")
	rig.start(config.KindClaudeAccount, "")
	rig.clk.Add(8 * time.Hour)
	rig.claude(claudeCodeBody)
	rig.post("/v1/messages", claudeCodeBody, "User-Agent", "curl/8")
	rig.noSecrets("the log", rig.logs.String())
	var m bytes.Buffer
	rig.srv.Metrics().WritePrometheus(&m)
	rig.noSecrets("the metrics", m.String())
	if !strings.Contains(m.String(), `slipstream_account_refreshes_total{account="a1",outcome="ok"} 1`) {
		t.Fatalf("no refresh metric:\n%s", grepLines(m.String(), "account"))
	}
	if !strings.Contains(m.String(), `slipstream_account_tokens_total{account="a1",kind="output"} 1`) {
		t.Fatalf("no token metric:\n%s", grepLines(m.String(), "account"))
	}
	if !strings.Contains(m.String(), `slipstream_account_cooling{account="a1"} 0`) {
		t.Fatalf("no cooling gauge:\n%s", grepLines(m.String(), "account"))
	}
	_ = os.Getenv
	_ = filepath.Join
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestCodexErrorInside200StreamFailsOver(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeCodex, "c1", "c2")
	resetsAt := rig.clk.Now().Add(2 * time.Hour).Unix()
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		if name != "c1" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keepalive\n\n")
		fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"usage_limit_reached\",\"message\":\"The usage limit has been reached\",\"resets_at\":%d}}\n\n", resetsAt)
		return true
	}
	rig.start(config.KindCodexAccount, "    strategy: fill-first\n")
	status, body := rig.post("/v1/responses", codexBody)
	if status != 200 || !strings.Contains(body, "response.completed") || strings.Contains(body, "usage_limit_reached") {
		t.Fatalf("status %d body %s", status, body)
	}
	if got := strings.Join(rig.seen, ","); got != "c1,c2" {
		t.Fatalf("accounts used %s, want c1 then c2", got)
	}
	if got := rig.srv.accts.Cooling("c1"); got.Unix() != resetsAt {
		t.Fatalf("c1 cools until %v, want resets_at", got)
	}
	rig.check()
}

func TestAccountLastErrorReachesClient(t *testing.T) {
	t.Parallel()
	// One account, quota used up: the client gets the provider's 429
	// body whole (it was read for its signal and put back).
	rig := newAccountRig(t, accounts.TypeCodex, "c1")
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","resets_in_seconds":600}}`)
		return true
	}
	rig.start(config.KindCodexAccount, "")
	status, body := rig.post("/v1/responses", codexBody)
	if status != 429 || !strings.Contains(body, "usage_limit_reached") {
		t.Fatalf("status %d body %q", status, body)
	}
	status, body = rig.post("/v1/responses", codexBody)
	if status != 429 || rig.calls.Load() != 1 {
		t.Fatalf("a resting account was called again: status %d calls %d body %s", status, rig.calls.Load(), body)
	}
}

// TestAccountSecretsNeverLeak drives every account path that writes a
// log line, an error body or a metric — refresh, refused refresh (needs
// login), 401, quota, ban, a refused client, all accounts unusable — and
// scans all of it for any token, refresh token or code the OAuth stub
// issued.
func TestAccountSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "a1", "a2", "a3")
	rig.stub.AllowReuse = true
	var bodies []string
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		switch name {
		case "a1":
			w.Header().Set("Anthropic-Ratelimit-Unified-Status", "rejected")
			w.Header().Set("Anthropic-Ratelimit-Unified-5h-Status", "rejected")
			w.Header().Set("Anthropic-Ratelimit-Unified-5h-Reset", fmt.Sprint(rig.clk.Now().Add(time.Hour).Unix()))
			w.WriteHeader(429)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"limit"}}`)
			return true
		case "a2":
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"This organization has been disabled."}}`)
			return true
		}
		return false
	}
	rig.start(config.KindClaudeAccount, "    strategy: fill-first\n")
	rig.clk.Add(8 * time.Hour) // every token expired: each is refreshed on use
	do := func(path, body string, hdr ...string) {
		_, b := rig.post(path, body, hdr...)
		bodies = append(bodies, b)
	}
	cc := []string{"User-Agent", "claude-cli/2.1.197 (external, cli)"}
	do("/v1/messages", claudeCodeBody, cc...)
	rig.stub.Revoke()
	do("/v1/messages", claudeCodeBody, cc...) // 401, refreshed, retried
	do("/v1/messages", claudeCodeBody, "User-Agent", "curl/8")
	// a3's refresh token is spent elsewhere: needs login; nothing is left.
	a3, _ := accounts.NewDir(rig.dir).Load("a3")
	f := accounts.DefaultFlow(accounts.TypeClaude)
	f.Override(accounts.Endpoints{Token: rig.stub.URL + "/token"})
	if _, err := f.Refresh(context.Background(), http.DefaultClient, a3.RefreshToken); err != nil {
		t.Fatal(err)
	}
	rig.stub.Revoke()
	do("/v1/messages", claudeCodeBody, cc...)
	do("/v1/messages", claudeCodeBody, cc...)
	var m bytes.Buffer
	rig.srv.Metrics().WritePrometheus(&m)
	logs := rig.logs.String()
	for _, want := range []string{"needs a new login", "disabled by the provider", "rests until", "refreshed a3"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the scenario did not reach %q; log:\n%s", want, logs)
		}
	}
	rig.noSecrets("the log", logs)
	rig.noSecrets("the client responses", strings.Join(bodies, "\n"))
	rig.noSecrets("the metrics", m.String())
	if len(rig.stub.Secrets()) < 8 {
		t.Fatalf("only %d secrets issued: the scan proves little", len(rig.stub.Secrets()))
	}
}

func TestGeminiAccountCodeAssistEnvelope(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeGemini, "g1")
	rig.start(config.KindGeminiAccount, "")
	gem := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	status, body := rig.post("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", gem)
	if status != 200 || strings.Contains(body, `"response"`) || !strings.Contains(body, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hel"}]}}]}`) {
		t.Fatalf("stream: status %d body %s", status, body)
	}
	status, body = rig.post("/v1beta/models/gemini-2.5-pro:generateContent", gem)
	if status != 200 || !strings.HasPrefix(body, `{"candidates":`) {
		t.Fatalf("plain: status %d body %s", status, body)
	}
	// Another dialect translates to Gemini, then goes in the envelope.
	status, body = rig.post("/v1/chat/completions", `{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if status != 200 || !strings.Contains(body, `"content":"hel"`) || !strings.Contains(body, "[DONE]") {
		t.Fatalf("chat stream: status %d body %s", status, body)
	}
	status, body = rig.post("/v1/chat/completions", `{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(body, `"content":"hello"`) {
		t.Fatalf("chat: status %d body %s", status, body)
	}
	rig.check()
}

func TestGeminiAccountQuotaRetryInfo(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeGemini, "g1", "g2")
	rig.answer = func(n int64, name string, w http.ResponseWriter, r *http.Request) bool {
		if name != "g1" || n != 1 {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"code":429,"message":"You have exhausted your capacity on this model.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3600s"}]}}`)
		return true
	}
	rig.start(config.KindGeminiAccount, "    strategy: fill-first\n")
	status, body := rig.post("/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if status != 200 || strings.Join(rig.seen, ",") != "g1,g2" {
		t.Fatalf("status %d body %s, accounts %v", status, body, rig.seen)
	}
	// Google's quota is per model: g1 rests for gemini-2.5-pro only.
	if got := rig.srv.accts.Cooling("g1"); !got.IsZero() {
		t.Fatalf("the whole of g1 rests until %v; want only the model", got)
	}
	rig.seen = nil
	rig.post("/v1beta/models/gemini-2.5-pro:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	rig.post("/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if got := strings.Join(rig.seen, ","); got != "g2,g1" {
		t.Fatalf("accounts used %s, want g2 for the resting model and g1 for another", got)
	}
}

func TestTwoInstancesShareRedisRefreshOnce(t *testing.T) {
	t.Parallel()
	// Two slipstream servers (replicas) over one accounts_dir and one
	// redis-server; the account's token has expired. Requests to both at
	// once make one refresh call: the replica that waited for the lock
	// finds the new tokens in the file (the stub fails the test if the
	// spent refresh token is presented again).
	rs := redistest.Start(t)
	rig := newAccountRig(t, accounts.TypeClaude, "a1")
	rig.stub.RefreshDelay = 100 * time.Millisecond
	top := "redis: {url: " + rs.URL() + ", prefix: t}"
	rig.startWith(config.KindClaudeAccount, top, "")
	first := rig.base
	rig.startWith(config.KindClaudeAccount, top, "")
	bases := []string{first, rig.base}
	rig.clk.Add(8 * time.Hour)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", bases[i%2]+"/v1/messages", strings.NewReader(claudeCodeBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "claude-cli/2.1.197 (external, cli)")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				bad.Add(1)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := rig.stub.Refreshes.Load(); n != 1 {
		t.Fatalf("two replicas made %d refresh calls, want 1", n)
	}
	if bad.Load() != 0 {
		t.Fatalf("%d requests failed", bad.Load())
	}
	rig.check()
}

func TestAccountsReloadPicksUpNewLogins(t *testing.T) {
	t.Parallel()
	rig := newAccountRig(t, accounts.TypeClaude, "a1")
	rig.start(config.KindClaudeAccount, "    strategy: fill-first\n")
	rig.srv.accts.Disable("a1", "banned for the test")
	if status, body := rig.claude(claudeCodeBody); status != 503 || !strings.Contains(body, "no usable account") {
		t.Fatalf("a disabled account: status %d body %s", status, body)
	}
	// A new login appears; the operator reloads.
	at, rt := rig.stub.Issue()
	accounts.NewDir(rig.dir).Save(&accounts.Account{Name: "a2", Type: accounts.TypeClaude, AccessToken: at, RefreshToken: rt, Expiry: rig.clk.Now().Add(7 * time.Hour)})
	if err := rig.srv.Reload(rig.srv.Config()); err != nil {
		t.Fatal(err)
	}
	rig.seen = nil
	if status, body := rig.claude(claudeCodeBody); status != 200 || strings.Join(rig.seen, ",") != "a2" {
		t.Fatalf("after reload: status %d body %s seen %v", status, body, rig.seen)
	}
	if _, ok := rig.srv.accts.Account("a1"); !ok {
		t.Fatal("the manager lost a1's state over the reload")
	}
	if a, _ := accounts.NewDir(rig.dir).Load("a1"); !a.Disabled {
		t.Fatal("a1's disabled state was lost")
	}
}

func TestRefusedByAccountFallsToKeyProvider(t *testing.T) {
	t.Parallel()
	// A Claude account first, an Anthropic API key beside it: Claude Code
	// goes to the account, another client to the key provider (not a
	// 403), and nothing is disguised on the way.
	rig := newAccountRig(t, accounts.TypeClaude, "max1")
	rc := &recorder{reply: claudeAnswer}
	keyUp := newUpstream(t, rc)
	rig.start(config.KindClaudeAccount, "    strategy: fill-first\n  - name: api\n    kind: anthropic\n    base_url: "+keyUp.URL+"\n    keys: [sk-ant-api-key]\n    models: [\"*\"]\n")
	if status, body := rig.post("/v1/messages", claudeCodeBody, "User-Agent", "python-httpx/0.27"); status != 200 {
		t.Fatalf("another client: status %d body %s", status, body)
	}
	_, _, h := rc.last()
	if h == nil || h.Get("X-Api-Key") != "sk-ant-api-key" || h.Get("Authorization") != "" || h.Get("User-Agent") != "python-httpx/0.27" {
		t.Fatalf("the key provider got %v", h)
	}
	if rig.calls.Load() != 0 {
		t.Fatal("the account upstream was called for another client")
	}
	if status, _ := rig.claude(claudeCodeBody); status != 200 || strings.Join(rig.seen, ",") != "max1" {
		t.Fatalf("Claude Code: status %d seen %v", status, rig.seen)
	}
	rig.check()
}
