package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexCmd is how Codex CLI is started: node and the npm package's
// bin/codex.js, which finds the platform package's native binary and puts
// its helpers (rg) on PATH. It skips the test when that binary is missing.
func codexCmd(t *testing.T) (node, script string) {
	t.Helper()
	node = needNode(t, "@openai/codex")
	script = filepath.Join(e2eDir(), "node_modules", "@openai", "codex", "bin", "codex.js")
	plat := filepath.Join(e2eDir(), "node_modules", "@openai", "codex-"+nodePlatform()+"-"+goArchNode())
	if _, err := os.Stat(filepath.Join(plat, "package.json")); err != nil {
		t.Skipf("@openai/codex: the platform package %s is missing (optional dependencies omitted?); rerun `npm ci --prefix e2e`", plat)
	}
	return node, script
}

// codexConfig is CODEX_HOME/config.toml per api-formats.md section G: a
// custom provider at the proxy, no update check, no analytics, no plugins.
func codexConfig(proxyURL, model string) string {
	return fmt.Sprintf(`model = %q
model_provider = "proxy"
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.proxy]
name = "slipstream"
base_url = "%s/v1"
wire_api = "responses"
env_key = "PROXY_API_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[analytics]
enabled = false

[features]
plugins = false
`, model, proxyURL)
}

// runCodex runs `codex exec --skip-git-repo-check --ephemeral PROMPT` in
// dir with a fresh CODEX_HOME and HOME.
func runCodex(t *testing.T, p *proxy, model, dir, prompt string) cliResult {
	t.Helper()
	node, script := codexCmd(t)
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(p.URL, model)), 0o600); err != nil {
		t.Fatal(err)
	}
	return runCLI(t, node, []string{script, "exec", "--skip-git-repo-check", "--ephemeral", prompt}, dir, []string{
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		"PROXY_API_KEY=" + testKey,
		"RUST_LOG=warn",
	})
}

// wantCodexResult checks exit 0 and that the final answer is on stdout
// (codex exec prints the last agent message there).
func wantCodexResult(t *testing.T, res cliResult, want string, s *stub) {
	t.Helper()
	if res.Code != 0 || !strings.Contains(string(res.Stdout), want) {
		t.Errorf("codex: exit %d, want exit 0 with %q on stdout\nstdout:\n%s\nstderr:\n%s\nupstream requests:\n%s",
			res.Code, want, clip(res.Stdout, 3000), clip(res.Stderr, 4000), s.Dump())
	}
}

// codexUpstreams are the provider dialects Codex is served by.
var codexUpstreams = []struct{ name, kind, api, dialect string }{
	{"anthropic", "anthropic", "", dialectAnthropic},
	{"chat", "openai", "chat", dialectChat},
}

func TestCodex(t *testing.T) {
	codexCmd(t)
	for _, up := range codexUpstreams {
		t.Run(up.name+"/text", func(t *testing.T) { testCodexText(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/tool", func(t *testing.T) { testCodexTool(t, up.kind, up.api, up.dialect) })
	}
}

func testCodexText(t *testing.T, kind, api, dialect string) {
	want := fmt.Sprintf("PONG from the %s stub ✓ \"quoted\"", dialect)
	s := newStub(t, dialect, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	model := "claude-e2e-" + dialect
	res := runCodex(t, p, model, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, want, s)
	main := mainRequests(t, s)
	if len(main) == 0 {
		return
	}
	r := main[0]
	if r.JSON["model"] != model {
		t.Errorf("upstream model = %v, want %s", r.JSON["model"], model)
	}
	if !strings.Contains(string(r.Body), "Reply with the word PONG.") {
		t.Errorf("upstream request lacks the prompt: %s", clip(r.Body, 2000))
	}
	wantUpstreamAuth(t, dialect, r)
}

// codexShellTools are the names Codex has used for its command tool, in
// order of preference.
var codexShellTools = []string{"exec_command", "shell_command", "shell"}

// codexShellArgs are the arguments that run `echo <word>` with each tool.
func codexShellArgs(tool, word string) string {
	switch tool {
	case "exec_command":
		return js(map[string]any{"cmd": "echo " + word})
	case "shell_command":
		return js(map[string]any{"command": "echo " + word})
	default:
		return js(map[string]any{"command": []string{"echo", word}})
	}
}

func testCodexTool(t *testing.T, kind, api, dialect string) {
	word := "hi-from-" + dialect
	const callID = "call_stub_shell_01"
	final := "The command printed its word, all done."
	var tool string
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		names := toolNames(dialect, r.JSON)
		if len(results) > 0 {
			return stubAnswer{Text: final}
		}
		for _, n := range codexShellTools {
			if contains(names, n) {
				tool = n
				return stubAnswer{Tool: n, ToolArgs: codexShellArgs(n, word), CallID: callID}
			}
		}
		t.Errorf("upstream request offers none of %v: %v", codexShellTools, names)
		return stubAnswer{Text: final}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodex(t, p, "claude-e2e-"+dialect, t.TempDir(), "Run echo and tell me what it printed.")
	wantCodexResult(t, res, final, s)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (tool call, then its result)\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, tool, word)
}
