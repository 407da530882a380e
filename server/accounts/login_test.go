package accounts

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"slipstream/internal/oauthstub"
)

// loginRig is a flow of typ pointed at a stub, with a loopback redirect
// on a free port.
func loginRig(t *testing.T, typ string) (*Flow, *oauthstub.Stub, net.Listener) {
	t.Helper()
	f := DefaultFlow(typ)
	if f.ClientID == "" {
		f.ClientID, f.ClientSecret = "google-client", "google-secret"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	stub := oauthstub.New(t, f.ClientID, redirect, f.JSONToken, f.PKCE)
	stub.DeviceRedirect = "https://auth.example/deviceauth/callback"
	f.Override(Endpoints{Authorize: stub.URL + "/authorize", Token: stub.URL + "/token", Redirect: redirect,
		DeviceCode: stub.URL + "/device/usercode", DeviceToken: stub.URL + "/device/token", Profile: stub.URL + "/profile", Userinfo: stub.URL + "/profile"})
	f.DeviceRedirectURI = stub.DeviceRedirect
	f.CodeAssistURL = ""
	if typ == TypeGemini || typ == TypeAntigravity {
		f.CodeAssistURL = stub.URL
		stub.Project = "proj-" + typ
		onboardPoll = time.Millisecond
	}
	return f, stub, ln
}

func TestLoginCodeFlowThroughLoopback(t *testing.T) {
	for _, typ := range []string{TypeClaude, TypeCodex, TypeGemini, TypeAntigravity} {
		t.Run(typ, func(t *testing.T) {
			f, stub, ln := loginRig(t, typ)
			l := NewLogin(f, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			codes := make(chan string, 1)
			go func() {
				c, err := l.Callback(ctx, ln)
				if err != nil {
					t.Error(err)
				}
				codes <- c
			}()
			// The browser: follows the authorize page's redirect to the
			// loopback callback.
			resp, err := http.Get(l.AuthorizeURL())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("callback answered %d", resp.StatusCode)
			}
			a, err := l.Finish(ctx, "", <-codes, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if a.RefreshToken == "" || a.AccessToken == "" || a.Email != stub.Email {
				t.Fatalf("account %+v", a.String())
			}
			if typ == TypeCodex && (a.AccountID != stub.AccountID || a.Plan != stub.Plan) {
				t.Fatalf("codex claims: id %q plan %q", a.AccountID, a.Plan)
			}
			if (typ == TypeGemini || typ == TypeAntigravity) && a.ProjectID != "proj-"+typ {
				t.Fatalf("Code Assist project %q, want proj-%s (loadCodeAssist, then onboardUser polled until done)", a.ProjectID, typ)
			}
			if (typ == TypeClaude || typ == TypeCodex) != f.PKCE {
				t.Fatal("PKCE is for Claude and Codex")
			}
		})
	}
}

func TestLoginPastedRedirect(t *testing.T) {
	f, stub, ln := loginRig(t, TypeClaude)
	ln.Close() // headless: nothing listens on the loopback port
	l := NewLogin(f, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(l.AuthorizeURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	code, err := l.ParseRedirect(loc)
	if err != nil {
		t.Fatal(err)
	}
	stub.NoEmail = true // the email comes from the profile endpoint
	// Claude's page shows "code#state": that form is accepted too.
	if c2, err := l.ParseRedirect(code + "#" + l.State); err != nil || c2 != code {
		t.Fatalf("code#state: %v", err)
	}
	a, err := l.Finish(context.Background(), "max", code, time.Now())
	if err != nil || a.Name != "max" || a.Email != stub.Email {
		t.Fatalf("finish: %v", err)
	}
	// The code is single-use.
	if _, err := l.Finish(context.Background(), "max", code, time.Now()); err == nil {
		t.Fatal("a code was accepted twice")
	}
}

func TestLoginStateMismatchRejected(t *testing.T) {
	f, _, ln := loginRig(t, TypeCodex)
	l := NewLogin(f, nil)
	if _, err := l.ParseRedirect(f.RedirectURI + "?code=abc&state=forged"); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("err = %v, want ErrStateMismatch", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := l.Callback(ctx, ln); done <- err }()
	resp, err := http.Get(f.RedirectURI + "?code=abc&state=forged")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("a forged callback got %d", resp.StatusCode)
	}
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the login took a forged code: %v", err)
	}
}

func TestLoginPKCEVerifiedByStub(t *testing.T) {
	f, _, ln := loginRig(t, TypeCodex)
	ln.Close()
	l := NewLogin(f, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(l.AuthorizeURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	code, err := l.ParseRedirect(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	l.Verifier = "a-different-verifier-than-the-one-challenged-0123456789abcdef"
	_, err = l.Finish(context.Background(), "x", code, time.Now())
	var oe *OAuthError
	if !errors.As(err, &oe) || oe.Code != "invalid_grant" {
		t.Fatalf("a wrong verifier: %v", err)
	}
}

func TestCodexDeviceLogin(t *testing.T) {
	f, stub, _ := loginRig(t, TypeCodex)
	stub.DevicePending = 3
	d, err := StartDevice(context.Background(), f, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	a, err := PollDevice(context.Background(), f, http.DefaultClient, d, "", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if stub.Polls() != 4 {
		t.Fatalf("polls = %d, want 3 pending + 1", stub.Polls())
	}
	if a.AccountID != stub.AccountID || a.RefreshToken == "" || !strings.HasPrefix(a.Name, "codex-") {
		t.Fatalf("account %s id %q", a.Name, a.AccountID)
	}
}

func TestImportCLIFiles(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude.json")
	os.WriteFile(claude, []byte(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","refreshToken":"sk-ant-ort01-y","expiresAt":1767225600000,"scopes":["user:inference"]}}`), 0o600)
	a, err := Import(TypeClaude, claude, time.Now())
	if err != nil || a.RefreshToken != "sk-ant-ort01-y" || !a.Expiry.Equal(time.UnixMilli(1767225600000)) {
		t.Fatalf("claude import: %v", err)
	}
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"email":"u@example.com","https://api.openai.com/auth":{"chatgpt_account_id":"ws-1","chatgpt_plan_type":"plus"}}`))
	access := "h." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":1767225600}`)) + ".s"
	codex := filepath.Join(dir, "auth.json")
	os.WriteFile(codex, []byte(`{"OPENAI_API_KEY":null,"tokens":{"id_token":"h.`+claims+`.s","access_token":"`+access+`","refresh_token":"rt-1","account_id":"ws-1"},"last_refresh":"2026-11-01T00:00:00Z"}`), 0o600)
	a, err = Import(TypeCodex, codex, time.Now())
	if err != nil || a.AccountID != "ws-1" || a.Plan != "plus" || a.Email != "u@example.com" || a.Expiry.Unix() != 1767225600 {
		t.Fatalf("codex import: %v %+v", err, a.String())
	}
	os.WriteFile(codex, []byte(`{"OPENAI_API_KEY":"sk-secret"}`), 0o600)
	if _, err := Import(TypeCodex, codex, time.Now()); err == nil || strings.Contains(err.Error(), "sk-secret") {
		t.Fatalf("an API-key auth file: %v", err)
	}
}
