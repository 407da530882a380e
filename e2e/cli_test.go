package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cliTimeout bounds one CLI run.
const cliTimeout = 60 * time.Second

// cliResult is what one CLI run produced.
type cliResult struct {
	Stdout, Stderr []byte
	Code           int
	Elapsed        time.Duration
}

// runCLI runs bin with args in dir under a fresh, minimal environment
// (PATH, LANG and env only: nothing of the caller's ANTHROPIC_*, OPENAI_*
// or proxy settings leaks in), stdin from /dev/null, bounded by
// cliTimeout. Outside traffic goes to a trapProxy.
func runCLI(t *testing.T, bin string, args []string, dir string, env []string) cliResult {
	t.Helper()
	return runCLIWith(t, bin, args, dir, env, true)
}

// runCLIWith is runCLI; trap false leaves out the trapProxy settings, for a
// CLI that sends even loopback traffic through HTTPS_PROXY (its offline
// settings must then keep it off the network).
func runCLIWith(t *testing.T, bin string, args []string, dir string, env []string, trap bool) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"CI=1",
	}
	if trap {
		cmd.Env = append(cmd.Env, newTrapProxy(t).Env()...)
	}
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// The CLI may start children (codex.js execs the native binary, tools
	// run commands): a timeout kills the whole process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := cliResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		res.Code = -1
		t.Errorf("%s timed out after %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), cliTimeout, clip(res.Stdout, 3000), clip(res.Stderr, 3000))
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("cannot run %s: %v", bin, err)
	}
	t.Logf("%s exited %d after %v", filepath.Base(bin), res.Code, res.Elapsed.Round(time.Millisecond))
	return res
}

// nativeBin finds a CLI's native binary in e2e/node_modules: the package's
// bin entry when it is a real executable, else the platform package's
// binary (for Claude Code, whose postinstall copies it over a stub). It
// skips the test with the precise reason when there is none.
func nativeBin(t *testing.T, pkg, bin string, platformPkg, platformBin string) string {
	t.Helper()
	needNode(t, pkg)
	nm := filepath.Join(e2eDir(), "node_modules")
	p := filepath.Join(nm, pkg, bin)
	if st, err := os.Stat(p); err == nil && st.Size() > 64<<10 && st.Mode()&0o111 != 0 {
		return p
	}
	alt := filepath.Join(nm, platformPkg, platformBin)
	if st, err := os.Stat(alt); err == nil && st.Mode()&0o111 != 0 {
		return alt
	}
	skipE2E(t, "%s: neither %s (postinstall did not place the native binary) nor %s exists for %s/%s; rerun `npm ci --prefix e2e` with install scripts allowed",
		pkg, p, alt, runtime.GOOS, runtime.GOARCH)
	return ""
}

// goArchNode maps GOARCH to Node's process.arch names used in package names.
func goArchNode() string {
	if runtime.GOARCH == "amd64" {
		return "x64"
	}
	return runtime.GOARCH
}

// nodePlatform maps GOOS to Node's process.platform names.
func nodePlatform() string {
	if runtime.GOOS == "windows" {
		return "win32"
	}
	return runtime.GOOS
}

// wantUpstreamAuth checks that the upstream got the provider's key, not
// the client's.
func wantUpstreamAuth(t *testing.T, dialect string, r *stubReq) {
	t.Helper()
	got := r.Header.Get("Authorization")
	want := "Bearer sk-upstream-stub-key"
	switch dialect {
	case dialectAnthropic:
		got, want = r.Header.Get("X-Api-Key"), "sk-upstream-stub-key"
	case dialectGemini:
		got, want = r.Header.Get("X-Goog-Api-Key"), "sk-upstream-stub-key"
	}
	if got != want {
		t.Errorf("upstream credential = %q, want %q", got, want)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, testKey) {
				t.Errorf("the client's key reached the upstream in header %s", k)
			}
		}
	}
}

// trapProxy is an HTTP(S) proxy the CLIs are pointed at (HTTPS_PROXY,
// HTTP_PROXY, ALL_PROXY, with NO_PROXY covering loopback): any attempt to
// reach an outside host through it is refused and recorded, and the test
// fails. A second guard beside the section G settings.
type trapProxy struct {
	URL  string
	mu   sync.Mutex
	hits []string
}

func newTrapProxy(t *testing.T) *trapProxy {
	tp := &trapProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp.mu.Lock()
		tp.hits = append(tp.hits, r.Method+" "+r.Host+r.URL.Path)
		tp.mu.Unlock()
		http.Error(w, "e2e: outside traffic is not allowed", http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	tp.URL = srv.URL
	t.Cleanup(func() {
		tp.mu.Lock()
		defer tp.mu.Unlock()
		if len(tp.hits) > 0 {
			t.Errorf("the CLI tried to reach outside hosts (refused): %v", tp.hits)
		}
	})
	return tp
}

// Env is the proxy environment pointing at the trap.
func (tp *trapProxy) Env() []string {
	return []string{
		"HTTPS_PROXY=" + tp.URL, "https_proxy=" + tp.URL,
		"HTTP_PROXY=" + tp.URL, "http_proxy=" + tp.URL,
		"ALL_PROXY=" + tp.URL, "all_proxy=" + tp.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
}
