package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"slipstream/internal/oauthstub"
	"slipstream/internal/testkit"
	"slipstream/server/accounts"
)

// freeRedirect returns a loopback redirect URI on a port free right now.
func freeRedirect(t *testing.T, path string) string {
	return "http://" + testkit.FreeAddr(t) + path
}

// loginRun runs `slipstream login ...` in the background; the test reads
// its stdout line by line and may write to its stdin.
type loginRun struct {
	out   *bufio.Reader
	in    *io.PipeWriter
	errb  *testkit.Buffer
	done  chan int
	lines []string
}

func startLogin(t *testing.T, args ...string) *loginRun {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &loginRun{out: bufio.NewReader(outR), in: inW, errb: &testkit.Buffer{}, done: make(chan int, 1)}
	go func() {
		code := run(append([]string{"login"}, args...), inR, outW, r.errb)
		outW.Close()
		r.done <- code
	}()
	t.Cleanup(func() { inW.Close() })
	return r
}

// until reads stdout lines until one has prefix; it returns that line.
func (r *loginRun) until(t *testing.T, prefix string) string {
	t.Helper()
	for {
		l, err := r.out.ReadString('\n')
		r.lines = append(r.lines, l)
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l)
		}
		if err != nil {
			t.Fatalf("no line %q in output %q (stderr %q)", prefix, r.lines, r.errb.String())
		}
	}
}

func (r *loginRun) wait(t *testing.T) string {
	t.Helper()
	rest, _ := io.ReadAll(r.out)
	select {
	case code := <-r.done:
		if code != 0 {
			t.Fatalf("login exited %d: %s", code, r.errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("login did not finish")
	}
	return strings.Join(r.lines, "") + string(rest)
}

func stubFor(t *testing.T, typ, path string) (*oauthstub.Stub, []string) {
	f := accounts.DefaultFlow(typ)
	redirect := freeRedirect(t, path)
	stub := oauthstub.New(t, f.ClientID, redirect, f.JSONToken, f.PKCE)
	return stub, []string{"-no-browser", "-accounts-dir", t.TempDir(), "-authorize-url", stub.URL + "/authorize",
		"-token-url", stub.URL + "/token", "-redirect-uri", redirect}
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestLoginCommandPastedRedirect(t *testing.T) {
	stub, flags := stubFor(t, accounts.TypeCodex, "/auth/callback")
	r := startLogin(t, append([]string{"codex", "-name", "work"}, flags...)...)
	r.until(t, "Open this URL")
	r.out.ReadString('\n')
	u := r.until(t, "http")
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r.until(t, "Or paste")
	io.WriteString(r.in, "http://localhost:1/auth/callback?code=x&state=forged\n") // refused, asked again
	io.WriteString(r.in, resp.Header.Get("Location")+"\n")
	out := r.wait(t)
	if !strings.Contains(out, "signed in: codex account work (user@example.com, plan pro") {
		t.Fatalf("output %q", out)
	}
	if !strings.Contains(r.errb.String(), "state does not match") {
		t.Fatalf("a forged paste was not refused: %q", r.errb.String())
	}
	dir := flags[2]
	a, err := accounts.NewDir(dir).Load("work")
	if err != nil || a.AccountID != stub.AccountID {
		t.Fatalf("stored account: %v", err)
	}
	st, _ := os.Stat(filepath.Join(dir, "work.json"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	noSecret(t, stub, "login output", out+r.errb.String())
}

func TestLoginCommandLoopbackRedirect(t *testing.T) {
	stub, flags := stubFor(t, accounts.TypeClaude, "/callback")
	r := startLogin(t, append([]string{"claude"}, flags...)...)
	r.until(t, "Open this URL")
	r.out.ReadString('\n')
	u := r.until(t, "http")
	r.until(t, "Waiting for the redirect")
	resp, err := http.Get(u) // the browser, following to the loopback listener
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("callback answered %d", resp.StatusCode)
	}
	out := r.wait(t)
	if !strings.Contains(out, "signed in: claude account claude-user@example.com") {
		t.Fatalf("output %q", out)
	}
	noSecret(t, stub, "login output", out)
}

func TestLoginCommandCodexDevice(t *testing.T) {
	stub, flags := stubFor(t, accounts.TypeCodex, "/auth/callback")
	stub.DevicePending = 2
	stub.DeviceRedirect = "https://auth.openai.com/deviceauth/callback"
	r := startLogin(t, append([]string{"codex", "-device", "-device-url", stub.URL + "/device/usercode", "-device-token-url", stub.URL + "/device/token"}, flags...)...)
	l := r.until(t, "Open ")
	if !strings.Contains(l, "ABCD-1234") {
		t.Fatalf("no user code: %q", l)
	}
	out := r.wait(t)
	if !strings.Contains(out, "signed in: codex account") || stub.Polls() != 3 {
		t.Fatalf("output %q, polls %d", out, stub.Polls())
	}
}

func TestLoginImportAndAccountsList(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), ".credentials.json")
	os.WriteFile(src, []byte(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-SECRETACCESS","refreshToken":"sk-ant-ort01-SECRETREFRESH","expiresAt":4102444800000}}`), 0o600)
	var out, errb bytes.Buffer
	if code := run([]string{"login", "import", "claude", src, "-name", "max", "-accounts-dir", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("import: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "as claude account max") {
		t.Fatalf("import output %q", out.String())
	}
	accounts.NewDir(dir).Patch("max", map[string]any{"needs_login": true})
	out.Reset()
	if code := run([]string{"accounts", "-accounts-dir", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("accounts: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "max") || !strings.Contains(out.String(), "needs login") || !strings.Contains(out.String(), "2100-01-01T00:00:00Z") {
		t.Fatalf("accounts output %q", out.String())
	}
	if strings.Contains(out.String(), "SECRET") {
		t.Fatal("accounts printed a token")
	}
}

func noSecret(t *testing.T, stub *oauthstub.Stub, what, s string) {
	t.Helper()
	for _, sec := range stub.Secrets() {
		if strings.Contains(s, sec) {
			t.Fatalf("%s holds a token or code", what)
		}
	}
}
