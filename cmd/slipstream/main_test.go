package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// TestMain lets the tests run this binary as slipstream itself: with
// SLIPSTREAM_TEST_MAIN=1 it is main() with the given arguments.
func TestMain(m *testing.M) {
	if os.Getenv("SLIPSTREAM_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// The servers these tests start keep their usage ledger in a
	// temporary state directory, never in the user's.
	state, err := os.MkdirTemp("", "slipstream-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

func TestRunCommands(t *testing.T) {
	f := func(args []string, stdin string, wantCode int, wantOut string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(stdin), &out, &errb)
		if code != wantCode || !strings.Contains(out.String()+errb.String(), wantOut) {
			t.Fatalf("%v: code %d, out %q, err %q", args, code, out.String(), errb.String())
		}
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"), 0o600)
	os.WriteFile(bad, []byte("providers:\n  - name: m\n    kind: mok\n    models: [x]\n"), 0o600)
	f([]string{"version"}, "", 0, "slipstream ")
	f([]string{"check", "-config", good}, "", 0, "ok")
	f([]string{"check", "-config", bad}, "", 1, "line 3: providers[0].kind: unknown kind \"mok\"")
	f([]string{"tokens"}, "hello world", 0, "2")
	f([]string{"tokens", "-ids", "-encoding", "cl100k_base"}, "hello world", 0, "15339\n1917\n")
	f([]string{"tokens", "-encoding", "nope"}, "", 2, "")
	f([]string{"tokens"}, "\t\n\t\nx", 0, "2")
}

// TestHelp: help, -h, -help and --help list every command and every flag
// on stdout and exit 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"-help"}, {"--help"}, {"help", "-h"}} {
		var out, errb bytes.Buffer
		if code := run(args, nil, &out, &errb); code != 0 || errb.Len() != 0 {
			t.Fatalf("%v: code %d, stderr %q", args, code, errb.String())
		}
		for _, want := range []string{"serve", "check", "health", "tokens", "version", "help",
			"-config", "-listen", "-pprof", "-print", "-insecure", "-encoding", "-ids", "SLIPSTREAM_LISTEN"} {
			if !strings.Contains(out.String(), want) {
				t.Fatalf("%v: help lacks %q:\n%s", args, want, out.String())
			}
		}
	}
}

// TestCommandHelp: `slipstream CMD -h` and `slipstream help CMD` print that
// command's own help: its usage line and flags, none of another command's.
func TestCommandHelp(t *testing.T) {
	cases := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"check", "-h"}, []string{"usage: slipstream check", "-config", "-print"}, []string{"-listen", "-encoding", "tokens"}},
		{[]string{"help", "check"}, []string{"usage: slipstream check", "-print"}, []string{"-listen", "-ids"}},
		{[]string{"tokens", "-help"}, []string{"usage: slipstream tokens", "-encoding", "-ids"}, []string{"-config", "-print"}},
		{[]string{"help", "health"}, []string{"usage: slipstream health", "-insecure"}, []string{"-print"}},
		{[]string{"serve", "-h"}, []string{"usage: slipstream serve", "-listen", "SLIPSTREAM_LISTEN"}, []string{"-print", "-ids"}},
		{[]string{"help", "version"}, []string{"usage: slipstream version", "print the version"}, []string{"-config"}},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		if code := run(c.args, nil, &out, &errb); code != 0 || errb.Len() != 0 {
			t.Fatalf("%v: code %d, stderr %q", c.args, code, errb.String())
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: help lacks %q:\n%s", c.args, w, out.String())
			}
		}
		for _, n := range c.not {
			if strings.Contains(out.String(), n) {
				t.Errorf("%v: help shows another command's %q:\n%s", c.args, n, out.String())
			}
		}
	}
}

// TestUsageErrors: unknown commands, unknown flags and extra arguments are
// errors with a usage line, exit 2, and start nothing.
func TestUsageErrors(t *testing.T) {
	f := func(args []string, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), "usage: slipstream") {
			t.Fatalf("%v: code %d, stderr %q; want 2 and %q with a usage line", args, code, errb.String(), want)
		}
	}
	f([]string{"frobnicate"}, `unknown command "frobnicate"`)
	f([]string{"serv"}, `unknown command "serv"`)
	f([]string{"check", "extra"}, `unexpected argument "extra"`)
	f([]string{"-listen", "127.0.0.1:0", "extra"}, `unexpected argument "extra"`)
	f([]string{"serve", "-listen", "127.0.0.1:0", "now"}, `unexpected argument "now"`)
	f([]string{"version", "x"}, `unexpected argument "x"`)
	f([]string{"tokens", "a", "b"}, `unexpected argument "b"`)
	f([]string{"health", "a", "b"}, `unexpected argument "b"`)
	f([]string{"-bogus"}, "flag provided but not defined: -bogus")
	f([]string{"check", "-listen", "x"}, "flag provided but not defined: -listen")
	f([]string{"help", "nope"}, `unknown command "nope"`)
	f([]string{"help", "check", "tokens"}, `unexpected argument "tokens"`)
}

// TestListenOverride: -listen and SLIPSTREAM_LISTEN replace the listen
// address only; the built-in default keeps its providers from the
// environment, a file keeps the rest of its settings.
func TestListenOverride(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("SLIPSTREAM_LISTEN", "")
	c, src, err := loadConfig("", "127.0.0.1:9999")
	if err != nil || c.Listen != "127.0.0.1:9999" || src != "built-in default" || c.Provider("anthropic") == nil || c.Provider("mock") == nil {
		t.Fatalf("flag over default: %v %q %+v", err, src, c)
	}
	t.Setenv("SLIPSTREAM_LISTEN", "127.0.0.1:9998")
	if c, _, err = loadConfig("", ""); err != nil || c.Listen != "127.0.0.1:9998" || c.Provider("anthropic") == nil {
		t.Fatalf("env over default: %v %+v", err, c)
	}
	if c, _, err = loadConfig("", "127.0.0.1:9997"); err != nil || c.Listen != "127.0.0.1:9997" {
		t.Fatalf("the flag must win over the environment: %v %+v", err, c)
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte("listen: 0.0.0.0:1\nproviders:\n  - {name: m, kind: mock, models: [\"*\"], reply: from-file}\n"), 0o600)
	// The file alone is invalid (no keys on a public address); with the
	// override on loopback it is fine, and keeps its provider.
	if c, _, err = loadConfig(path, "127.0.0.1:9996"); err != nil || c.Listen != "127.0.0.1:9996" || c.Providers[0].Reply != "from-file" {
		t.Fatalf("flag over file: %v %+v", err, c)
	}
	t.Setenv("SLIPSTREAM_LISTEN", "")
	_, _, err = loadConfig("", "0.0.0.0:9995")
	if err == nil || !strings.Contains(err.Error(), "listen (-listen or SLIPSTREAM_LISTEN)") && !strings.Contains(err.Error(), "no client keys") {
		t.Fatalf("a public -listen without keys: %v", err)
	}
	_, _, err = loadConfig("", "127.0.0.1:99999")
	if err == nil || !strings.Contains(err.Error(), "listen (-listen or SLIPSTREAM_LISTEN): port") {
		t.Fatalf("a bad -listen: %v", err)
	}
}

// TestCheckPrint: check -print shows the effective configuration with
// defaults and ${ENV} filled in, and no secret, from the file or the
// environment.
func TestCheckPrint(t *testing.T) {
	t.Setenv("OPS_SECRET_KEY", "sk-from-env-4c1b9d")
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte(`keys:
  - {name: laptop, key: "${OPS_SECRET_KEY}"}
providers:
  - name: anthropic
    kind: anthropic
    keys: ["sk-ant-in-file-77a1e0", "${OPS_SECRET_KEY}"]
    models: ["claude-*"]
  - {name: m, kind: mock, models: ["mock*"]}
limits: {max_body_bytes: 8MiB}
`), 0o600)
	var out, errb bytes.Buffer
	if code := run([]string{"check", "-config", path, "-print"}, nil, &out, &errb); code != 0 {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	s := out.String()
	for _, secret := range []string{"sk-from-env-4c1b9d", "sk-ant-in-file-77a1e0"} {
		if strings.Contains(s, secret) || strings.Contains(errb.String(), secret) {
			t.Fatalf("secret %q printed:\n%s", secret, s)
		}
	}
	for _, want := range []string{"name: laptop", "key: REDACTED", "base_url: https://api.anthropic.com", "max_body_bytes: 8MiB", "first_byte: 10m0s", "reply: Hello from the slipstream mock provider."} {
		if !strings.Contains(s, want) {
			t.Fatalf("-print lacks %q:\n%s", want, s)
		}
	}
}

func TestWarnings(t *testing.T) {
	f := func(yml string, want ...string) {
		t.Helper()
		c, err := config.Parse([]byte(yml), testkit.Env())
		if err != nil {
			t.Fatal(err)
		}
		ws := strings.Join(warnings(c), "\n")
		for _, w := range want {
			if !strings.Contains(ws, w) {
				t.Fatalf("warnings\n%s\nlack %q", ws, w)
			}
		}
		if len(want) == 0 && ws != "" {
			t.Fatalf("want no warnings, got\n%s", ws)
		}
	}
	cert, key := writeCert(t, t.TempDir(), 1)
	const limits = "limits: {max_bytes_in_flight: 64MiB}\n"
	f(limits + "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n") // the default: fine
	f(limits+"providers:\n  - {name: o, kind: openai, keys: [k], models: [\"gpt-*\"]}\n", "no provider or alias serves claude-*")
	f(limits + "providers:\n  - {name: o, kind: openai, keys: [k], models: [\"gpt-*\"]}\naliases: {\"claude-*\": o/gpt-5}\n") // aliased: fine
	f(limits+"providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n  - {name: a, kind: anthropic, keys: [k], models: [\"claude-*\"]}\n",
		`mock provider m serves every model name ("*")`)
	f(limits+"listen: 0.0.0.0:8317\nkeys: [{name: a, key: k}]\nproviders:\n  - {name: m, kind: mock, models: [\"*\"]}\n",
		"client keys travel in clear text", "provider m is the mock, reachable from the network")
	f(limits+"providers:\n  - {name: a, kind: anthropic, keys: [k], base_url: \"http://gw.example.com\", models: [\"claude-*\"]}\n",
		"provider a sends its credentials in clear text")
	f(limits + "providers:\n  - {name: a, kind: anthropic, keys: [k], base_url: \"http://127.0.0.1:9\", models: [\"claude-*\"]}\n")
	if config.MemoryLimit() == 0 {
		f("providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n") // a laptop: fine
		f("listen: 0.0.0.0:1\ntls: {cert_file: "+cert+", key_file: "+key+"}\nkeys: [{name: a, key: k}]\nproviders:\n  - {name: m, kind: mock, models: [\"m*\"]}\n  - {name: a, kind: anthropic, keys: [k], models: [\"claude-*\"]}\n", "no memory bound on a shared listener")
	}
}

// TestStartupSummary runs slipstream (this test binary) with a config
// holding secrets and checks its start-up summary: every part present, no
// credential, then the listening line; it serves, and SIGTERM stops it.
func TestStartupSummary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	addr := testkit.FreeAddr(t)
	os.WriteFile(path, []byte(`keys:
  - {name: laptop, key: sk-client-0a9f7e}
  - {name: ci, key: sk-client-b7d2c1}
providers:
  - name: openai
    kind: openai
    api: responses
    keys: [sk-up-1e8f3a, sk-up-9c4d2b]
    models: ["gpt-*", "o3*"]
  - {name: m, kind: mock, models: ["mock*"]}
aliases: {fast: openai/gpt-5-mini}
limits: {max_bytes_in_flight: 32MiB, max_concurrent: 100}
`), 0o600)
	p := startMain(t, "-config", path, "-listen", addr)
	line := p.waitFor(t, "listening on ")
	if !strings.Contains(line, "http://"+addr) {
		t.Fatalf("listening line %q", line)
	}
	log := p.out.String()
	for _, want := range []string{"slipstream dev, config: " + path, "listen       http://" + addr,
		"client auth  on, 2 keys: laptop, ci",
		"openai       kind openai, api responses, models gpt-* o3*, 2 credentials, https://api.openai.com/v1",
		"m            kind mock, models mock*", "aliases      fast -> openai/gpt-5-mini",
		"max_bytes_in_flight 32MiB", "max_concurrent 100", "warning: no provider or alias serves claude-*"} {
		if !strings.Contains(log, want) {
			t.Fatalf("summary lacks %q:\n%s", want, log)
		}
	}
	for _, secret := range []string{"sk-client-0a9f7e", "sk-client-b7d2c1", "sk-up-1e8f3a", "sk-up-9c4d2b"} {
		if strings.Contains(log, secret) {
			t.Fatalf("secret %s in the summary:\n%s", secret, log)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"health", "http://" + addr + "/readyz"}, nil, &out, &errb); code != 0 {
		t.Fatalf("health: %d %s", code, errb.String())
	}
	p.stop(t)
	if code := run([]string{"health", "http://" + addr + "/readyz"}, nil, &out, &errb); code != 1 {
		t.Fatalf("health of a stopped server: %d", code)
	}
}

// mainProc is this test binary running as slipstream.
type mainProc struct {
	cmd  *exec.Cmd
	out  *testkit.Buffer
	done chan struct{}
}

func startMain(t *testing.T, args ...string) *mainProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "SLIPSTREAM_TEST_MAIN=1")
	p := &mainProc{cmd: cmd, out: &testkit.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("slipstream output:\n%s", p.out.String())
		}
	})
	return p
}

// waitFor waits until a line of output contains s and returns that line.
func (p *mainProc) waitFor(t *testing.T, s string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		for sc.Scan() {
			if strings.Contains(sc.Text(), s) {
				return sc.Text()
			}
		}
		select {
		case <-p.done:
			t.Fatalf("exited before printing %q:\n%s", s, p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no %q after 15s:\n%s", s, p.out.String())
	return ""
}

func (p *mainProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop on SIGTERM")
	}
	if !strings.Contains(p.out.String(), "stopped") {
		t.Fatalf("no clean stop:\n%s", p.out.String())
	}
}

func TestDefaultHealthURL(t *testing.T) {
	f := func(listen, want string) {
		t.Helper()
		if got := defaultHealthURL(listen); got != want {
			t.Fatalf("defaultHealthURL(%q) = %q, want %q", listen, got, want)
		}
	}
	f("", "http://127.0.0.1:8317/readyz")
	f("0.0.0.0:9000", "http://127.0.0.1:9000/readyz")
	f(":9001", "http://127.0.0.1:9001/readyz")
	f("[::]:9002", "http://127.0.0.1:9002/readyz")
	f("10.0.0.5:9003", "http://10.0.0.5:9003/readyz")
	f("[::1]:9004", "http://[::1]:9004/readyz")
}

func TestProviderLine(t *testing.T) {
	f := func(yml, want string) {
		t.Helper()
		c, err := config.Parse([]byte("providers:\n  - "+yml+"\n"), testkit.Env())
		if err != nil {
			t.Fatal(err)
		}
		if got := providerLine(&c.Providers[0]); got != want {
			t.Fatalf("providerLine = %q, want %q", got, want)
		}
	}
	f(`{name: local, kind: openai, base_url: "http://127.0.0.1:11434/v1", models: ["qwen*"]}`,
		"local        kind openai, api chat, models qwen*, no credentials (none sent), http://127.0.0.1:11434/v1")
	f(`{name: a, kind: anthropic, keys: [sk-ant-1, sk-ant-2], models: ["claude-*"]}`,
		"a            kind anthropic, models claude-*, 2 credentials, https://api.anthropic.com")
	f(`{name: m, kind: mock, models: ["*"]}`, "m            kind mock, models *")
}
