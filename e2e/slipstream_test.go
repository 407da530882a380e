package e2e

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"slipstream/internal/testkit"
)

// testKey is the client key every test config accepts.
const testKey = "sk-e2e-client-key"

// binDir holds the slipstream binary built once per test binary; TestMain
// removes it.
var binDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "slipstream-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot create bin dir:", err)
		os.Exit(1)
	}
	binDir = d
	// slipstream keeps its usage ledger in the user's state directory by
	// default: the binaries these tests start keep theirs here instead.
	os.Setenv("XDG_STATE_HOME", filepath.Join(d, "state"))
	os.Unsetenv("STATE_DIRECTORY")
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

var build struct {
	once sync.Once
	path string
	out  string // go build's output when it failed
}

// slipstreamBin builds ./cmd/slipstream once and returns its path
// ($SLIPSTREAM_E2E_BIN, when set, is used instead). A tree
// that does not build fails the test with the clipped build output: a
// build failure is a failure, never a skip.
func slipstreamBin(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		if p := os.Getenv("SLIPSTREAM_E2E_BIN"); p != "" {
			build.path = p // a prebuilt binary, e.g. from another tree
			return
		}
		p := filepath.Join(binDir, "slipstream")
		cmd := exec.Command("go", "build", "-o", p, "./cmd/slipstream")
		cmd.Dir = repoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			build.out = fmt.Sprintf("%v\n%s", err, clip(out, 2000))
			return
		}
		build.path = p
	})
	if build.path == "" {
		t.Fatalf("cannot build ./cmd/slipstream:\n%s", build.out)
	}
	return build.path
}

// repoRoot is the module root: the e2e tests run in <root>/e2e.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}

// e2eDir is the directory of this package (node_modules, sdk/).
func e2eDir() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd
}

// proxy is one running slipstream process.
type proxy struct {
	URL     string // http://127.0.0.1:PORT, no trailing slash
	Addr    string
	Config  string // the config file's path
	Pid     int
	log     *testkit.Buffer
	logPath string // set when the output goes to a file (startOpts.logFile)
}

// Log returns what slipstream wrote to stderr so far.
func (p *proxy) Log() string {
	if p.logPath != "" {
		b, _ := os.ReadFile(p.logPath)
		return string(b)
	}
	return p.log.String()
}

// startOpts are the process settings startSlipstreamWith adds to a config.
type startOpts struct {
	env     []string // added to the test's environment, e.g. "GOMEMLIMIT=64MiB"
	logFile string   // stdout and stderr appended to this file in the config's directory
}

// startSlipstream writes cfg (YAML; "{{LISTEN}}" is replaced by the chosen
// loopback address) to a temp dir, starts slipstream on it, waits until
// GET /readyz answers 200 and stops it (SIGTERM, then wait) at cleanup.
// On test failure slipstream's stderr is logged.
func startSlipstream(t *testing.T, cfg string) *proxy {
	t.Helper()
	return startSlipstreamWith(t, cfg, startOpts{})
}

// startSlipstreamWith is startSlipstream with process settings o.
func startSlipstreamWith(t *testing.T, cfg string, o startOpts) *proxy {
	t.Helper()
	bin := slipstreamBin(t)
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		addr := testkit.FreeAddr(t)
		p, err := tryStart(t, bin, strings.ReplaceAll(cfg, "{{LISTEN}}", addr), addr, o)
		if err == nil {
			return p
		}
		lastErr = err.Error()
	}
	t.Fatalf("cannot start slipstream: %s", lastErr)
	return nil
}

func tryStart(t *testing.T, bin, cfg, addr string, o startOpts) (*proxy, error) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slipstream.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &testkit.Buffer{}
	cmd := exec.Command(bin, "-config", path)
	cmd.Dir = dir
	cmd.Stdout = log
	cmd.Stderr = log
	logPath := ""
	if o.logFile != "" {
		logPath = filepath.Join(dir, o.logFile)
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child keeps its own descriptor
		cmd.Stdout, cmd.Stderr = f, f
	}
	if len(o.env) > 0 {
		cmd.Env = append(os.Environ(), o.env...)
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	scheme := "http"
	if strings.Contains(cfg, "\ntls:") { // tlsConfig: served over HTTPS
		scheme = "https"
	}
	p := &proxy{URL: scheme + "://" + addr, Addr: addr, Config: path, Pid: cmd.Process.Pid, log: log, logPath: logPath}
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-exited:
			return nil, fmt.Errorf("slipstream exited before ready: %s\nconfig:\n%s", clip([]byte(p.Log()), 3000), cfg)
		default:
		}
		if readyz(p.URL) {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("slipstream not ready after 15s: %s", clip([]byte(p.Log()), 3000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("slipstream log:\n%s", clip([]byte(p.Log()), 8000))
		}
	})
	return p, nil
}

func readyz(base string) bool {
	// Readiness only: the certificate of an HTTPS slipstream is what the
	// clients under test verify, not this probe.
	c := http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(base + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// mockConfig is a slipstream config with one client key and the mock
// provider serving every model.
func mockConfig(reply string) string {
	return fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - name: e2e
    key: %s
    models: ["*"]
providers:
  - name: mock
    kind: mock
    models: ["*"]
    reply: %s
    chunks: 5
    chunk_delay: 2ms
timeouts:
  keepalive: 0s
log:
  access: true
`, testKey, yamlQuote(reply))
}

// upstreamConfig is a slipstream config with one provider of the given
// kind and api in front of a stub at baseURL, serving every model.
func upstreamConfig(kind, api, baseURL string) string {
	apiLine := ""
	if api != "" {
		apiLine = "    api: " + api + "\n"
	}
	return fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - name: e2e
    key: %s
    models: ["*"]
providers:
  - name: stub
    kind: %s
%s    base_url: %s
    keys: ["sk-upstream-stub-key"]
    models: ["*"]
timeouts:
  keepalive: 0s
  first_byte: 30s
log:
  access: true
`, testKey, kind, apiLine, baseURL)
}

// yamlQuote writes s as a single-quoted YAML scalar.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// clip shortens b for messages.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n/2]) + fmt.Sprintf("\n... (%d bytes clipped) ...\n", len(b)-n) + string(b[len(b)-n/2:])
}
