package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"slipstream/internal/oauthstub"
	"slipstream/server/accounts"
)

// Subscription accounts with the real clients: slipstream holds a stored
// login (expired, so the first request also exercises the refresh at an
// OAuth stub) and signs the client's requests with it; a guard in front
// of the upstream stub checks what the account's backend requires and
// that the client is forwarded as itself.

// accountGuard wraps a stub: every request must carry the account's
// current access token as a bearer, no API key, and pass rules.
type accountGuard struct {
	t     *testing.T
	oauth *oauthstub.Stub
	s     *stub
	rules func(r *http.Request, body []byte) []string
	srv   *httptest.Server
	mu    sync.Mutex
	bad   []string
}

func newAccountGuard(t *testing.T, oauth *oauthstub.Stub, s *stub, rules func(r *http.Request, body []byte) []string) *accountGuard {
	g := &accountGuard{t: t, oauth: oauth, s: s, rules: rules}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *accountGuard) serve(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	var bad []string
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !g.oauth.ValidAccess(tok) {
		bad = append(bad, "no valid account access token")
	}
	if r.Header.Get("X-Api-Key") != "" {
		bad = append(bad, "an x-api-key reached an account upstream")
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, testKey) {
				bad = append(bad, "the client's key reached the upstream in "+k)
			}
		}
	}
	if isGenerate(g.s.dialect, r.Method, r.URL.Path) {
		bad = append(bad, g.rules(r, body.Bytes())...)
	}
	if len(bad) > 0 {
		g.mu.Lock()
		g.bad = append(g.bad, fmt.Sprintf("%s %s: %s", r.Method, r.URL.Path, strings.Join(bad, "; ")))
		g.mu.Unlock()
	}
	r.Body = httpNopCloser{bytes.NewReader(body.Bytes())}
	g.s.serve(w, r)
}

type httpNopCloser struct{ *bytes.Reader }

func (httpNopCloser) Close() error { return nil }

func (g *accountGuard) check() {
	g.t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.bad {
		g.t.Errorf("account upstream: %s", b)
	}
}

// accountSetup stores one expired login of typ and returns the OAuth
// stub and the accounts_dir.
func accountSetup(t *testing.T, typ string) (*oauthstub.Stub, string) {
	f := accounts.DefaultFlow(typ)
	oauth := oauthstub.New(t, f.ClientID, "http://localhost:1/cb", f.JSONToken, f.PKCE)
	dir := t.TempDir()
	at, rt := oauth.Issue()
	a := &accounts.Account{Name: "sub1", Type: typ, AccessToken: at, RefreshToken: rt, AccountID: "ws-e2e",
		LastRefresh: time.Now().Add(-9 * time.Hour), Expiry: time.Now().Add(-time.Hour)}
	if err := accounts.NewDir(dir).Save(a); err != nil {
		t.Fatal(err)
	}
	return oauth, dir
}

func accountConfig(kind, typ, base, dir, tokenURL string) string {
	return fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - name: e2e
    key: %s
    models: ["*"]
accounts_dir: %s
accounts:
  oauth:
    %s: {token: %s}
providers:
  - name: subs
    kind: %s
    base_url: %s
    accounts: ["sub*"]
    models: ["*"]
timeouts:
  keepalive: 0s
  first_byte: 30s
log:
  access: true
`, testKey, dir, typ, tokenURL, kind, base)
}

func TestClaudeCodeThroughClaudeAccount(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	oauth, dir := accountSetup(t, accounts.TypeClaude)
	want := "PONG through a Claude account"
	s := newStub(t, dialectAnthropic, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	g := newAccountGuard(t, oauth, s, func(r *http.Request, body []byte) []string {
		var bad []string
		beta := r.Header.Get("Anthropic-Beta")
		// Claude Code's own list (it starts with claude-code-20250219),
		// with the flag OAuth tokens need added.
		if !strings.HasPrefix(beta, "claude-code-20250219") || !strings.Contains(beta, "oauth-2025-04-20") {
			bad = append(bad, "anthropic-beta is not Claude Code's list plus oauth-2025-04-20: "+beta)
		}
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "claude-cli/") {
			bad = append(bad, "user-agent is not Claude Code's own: "+ua)
		}
		// Claude Code's own system prompt, as it sent it (interactive:
		// "You are Claude Code, ..."; -p runs through the Agent SDK).
		if !bytes.Contains(body, []byte("You are Claude Code")) && !bytes.Contains(body, []byte("You are a Claude agent, built on Anthropic's Claude Agent SDK")) {
			bad = append(bad, "the system prompt is not Claude Code's")
		}
		return bad
	})
	p := startSlipstream(t, accountConfig("claude-account", "claude", g.srv.URL, dir, oauth.URL+"/token"))
	res := runClaude(t, p, "claude-sonnet-4-5", t.TempDir(), "Reply with the word PONG.")
	wantClaudeResult(t, res, want, s)
	g.check()
	if n := oauth.Refreshes.Load(); n != 1 {
		t.Errorf("the expired login was refreshed %d times, want 1", n)
	}
	noTokens(t, oauth, "slipstream's log", p.Log())
}

func codexAccountRules(r *http.Request, body []byte) []string {
	var bad []string
	if r.Header.Get("Chatgpt-Account-Id") != "ws-e2e" {
		bad = append(bad, "chatgpt-account-id is "+r.Header.Get("Chatgpt-Account-Id"))
	}
	if r.Header.Get("Originator") == "" {
		bad = append(bad, "Codex's originator header was not forwarded")
	}
	for _, want := range []string{`"stream":true`, `"store":false`, `"instructions":`} {
		if !bytes.Contains(body, []byte(want)) {
			bad = append(bad, "body lacks "+want)
		}
	}
	return bad
}

func TestCodexThroughCodexAccount(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	oauth, dir := accountSetup(t, accounts.TypeCodex)
	want := "PONG through a ChatGPT account"
	s := newStub(t, dialectResponses, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	g := newAccountGuard(t, oauth, s, codexAccountRules)
	p := startSlipstream(t, accountConfig("codex-account", "codex", g.srv.URL+"/v1", dir, oauth.URL+"/token"))
	res := runCodex(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, want, s)
	g.check()
	if n := oauth.Refreshes.Load(); n != 1 {
		t.Errorf("the expired login was refreshed %d times, want 1", n)
	}
	noTokens(t, oauth, "slipstream's log", p.Log())
}

func TestCodexWebSocketThroughCodexAccount(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	oauth, dir := accountSetup(t, accounts.TypeCodex)
	want := "PONG over the socket through a ChatGPT account"
	s := newStub(t, dialectResponses, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	g := newAccountGuard(t, oauth, s, codexAccountRules)
	p := startSlipstream(t, accountConfig("codex-account", "codex", g.srv.URL+"/v1", dir, oauth.URL+"/token"))
	res := runCodexBuiltin(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, want, s)
	wantWebSocketTurns(t, p, 1)
	g.check()
	noTokens(t, oauth, "slipstream's log", p.Log())
}

func noTokens(t *testing.T, oauth *oauthstub.Stub, what, s string) {
	t.Helper()
	for _, sec := range oauth.Secrets() {
		if strings.Contains(s, sec) {
			t.Errorf("%s holds a token", what)
			return
		}
	}
}
