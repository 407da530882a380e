package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's quick starts, run as written: each snippet is the fenced
// block after an `<!-- e2e:NAME -->` marker, and only the address
// (127.0.0.1:8317 becomes the test's slipstream) and upstream keys change.

const readmeAddr = "http://127.0.0.1:8317"

// readmeBlock returns the body of the fenced block marked name.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- e2e:" + regexp.QuoteMeta(name) + " -->\n```[a-z]*\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("README.md has no block marked e2e:%s", name)
	}
	return string(m[1])
}

// readmeExports returns the NAME=value of each `export` line of a shell
// snippet, with the address pointed at p, and the other lines.
func readmeExports(t *testing.T, snippet string, p *proxy) (env, rest []string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(snippet), "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			env = append(env, strings.ReplaceAll(kv, readmeAddr, p.URL))
			continue
		}
		rest = append(rest, line)
	}
	if len(env) == 0 {
		t.Fatalf("snippet exports nothing:\n%s", snippet)
	}
	return env, rest
}

// readmeMockConfig is slipstream as the README starts it, without client
// keys, serving every model from the mock.
const readmeMockConfig = `listen: {{LISTEN}}
providers:
  - {name: mock, kind: mock, models: ["*"]}
timeouts:
  keepalive: 0s
log:
  access: true
`

// mockDefaultReply is the mock's default answer.
const mockDefaultReply = "Hello from the slipstream mock provider."

// runClaudeEnv runs Claude Code -p with the README's environment (no
// ANTHROPIC_API_KEY of the test's) plus the offline settings.
func runClaudeEnv(t *testing.T, env []string, dir, prompt string, args ...string) claudeOutput {
	t.Helper()
	home := t.TempDir()
	res := runCLI(t, claudeBin(t), append([]string{"-p", prompt, "--output-format", "json"}, args...), dir, append([]string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	}, env...))
	var out claudeOutput
	if err := json.Unmarshal(lastJSONLine(res.Stdout), &out); err != nil || res.Code != 0 || out.IsError {
		t.Fatalf("claude: exit %d, %v, %+v\nstdout:\n%s\nstderr:\n%s", res.Code, err, out, clip(res.Stdout, 3000), clip(res.Stderr, 3000))
	}
	return out
}

// TestReadmeClaudeCode runs the README's Claude Code environment against
// slipstream, and its pattern-alias config (the OpenAI provider pointed
// at a Responses stub).
func TestReadmeClaudeCode(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	t.Run("anthropic", func(t *testing.T) {
		s := newStub(t, dialectAnthropic, func(r *stubReq) stubAnswer { return stubAnswer{Text: "PONG from Anthropic"} })
		// No client keys, as the README's slipstream runs.
		p := startSlipstream(t, "listen: {{LISTEN}}\nproviders:\n  - {name: anthropic, kind: anthropic, base_url: \""+s.BaseURL()+
			"\", keys: [sk-upstream-stub-key], models: [\"claude-*\"]}\ntimeouts: {keepalive: 0s}\nlog: {access: true}\n")
		env, rest := readmeExports(t, readmeBlock(t, "claude-env"), p)
		if rest[len(rest)-1] != "claude" {
			t.Fatalf("the snippet does not end by running claude: %q", rest)
		}
		if out := runClaudeEnv(t, env, t.TempDir(), "Reply with PONG."); out.Result != "PONG from Anthropic" {
			t.Fatalf("result %q", out.Result)
		}
		for _, r := range s.Requests() {
			if m := upstreamModel(dialectAnthropic, r); m != "claude-opus-4-8" {
				t.Errorf("upstream model %q, want Claude Code's default claude-opus-4-8", m)
			}
		}
	})
	t.Run("gpt_pattern_alias", func(t *testing.T) {
		s := newStub(t, dialectResponses, func(r *stubReq) stubAnswer { return stubAnswer{Text: "PONG from GPT"} })
		yml := readmeBlock(t, "claude-gpt-yaml")
		yml = strings.Replace(yml, "    api: responses\n", "    api: responses\n    base_url: "+s.BaseURL()+"\n", 1)
		yml = strings.ReplaceAll(yml, "${OPENAI_API_KEY}", "sk-upstream-stub-key")
		p := startSlipstream(t, "listen: {{LISTEN}}\ntimeouts: {keepalive: 0s}\nlog: {access: true}\n"+yml)
		env, _ := readmeExports(t, readmeBlock(t, "claude-env"), p)
		for _, args := range [][]string{nil, {"--model", "sonnet"}} {
			if out := runClaudeEnv(t, env, t.TempDir(), "Reply with PONG.", args...); out.Result != "PONG from GPT" {
				t.Fatalf("%v: result %q", args, out.Result)
			}
		}
		for _, r := range s.Requests() {
			if m := upstreamModel(dialectResponses, r); m != "gpt-5.5" && m != "gpt-5.6-luna" {
				t.Errorf("upstream model %q, want the README's gpt-5.5 (or gpt-5.6-luna for haiku)", m)
			}
		}
	})
}

// codexTestSettings keep Codex offline in tests; prepended (top-level keys
// must precede the README's tables).
const codexTestSettings = `check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "danger-full-access"
`

const codexTestTables = `
[analytics]
enabled = false

[features]
plugins = false
`

// runCodexReadme runs `codex exec` with the README's config.toml and
// environment.
func runCodexReadme(t *testing.T, p *proxy, tomlName, envName string) codexEvents {
	t.Helper()
	node, script := codexCmd(t)
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	toml := codexTestSettings + strings.ReplaceAll(readmeBlock(t, tomlName), readmeAddr, p.URL) + codexTestTables
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	env, rest := readmeExports(t, readmeBlock(t, envName), p)
	if !strings.HasPrefix(rest[len(rest)-1], "codex") {
		t.Fatalf("the snippet does not end by running codex: %q", rest)
	}
	res := runCLI(t, node, []string{script, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "say hi"}, t.TempDir(),
		append([]string{"HOME=" + home, "CODEX_HOME=" + codexHome, "RUST_LOG=warn"}, env...))
	ev := parseCodexJSONL(res.Stdout)
	if res.Code != 0 || !ev.Completed || ev.Answer != mockDefaultReply {
		t.Fatalf("codex: exit %d, completed %v, answer %q, errors %q\nstdout:\n%s\nstderr:\n%s", res.Code, ev.Completed, ev.Answer, ev.Errors, clip(res.Stdout, 3000), clip(res.Stderr, 3000))
	}
	return ev
}

// TestReadmeCodex runs both README Codex setups against slipstream's mock:
// the custom provider, and the built-in provider (over the Responses
// WebSocket).
func TestReadmeCodex(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	t.Run("custom_provider", func(t *testing.T) {
		p := startSlipstream(t, readmeMockConfig)
		runCodexReadme(t, p, "codex-provider-toml", "codex-provider-env")
	})
	t.Run("builtin_provider", func(t *testing.T) {
		p := startSlipstream(t, readmeMockConfig)
		runCodexReadme(t, p, "codex-builtin-toml", "codex-builtin-env")
		if l := parseWSLog(p.Log()); l.Opens == 0 || len(l.Frames) == 0 {
			t.Errorf("the built-in provider did not talk over the WebSocket: %+v\n%s", l, clip([]byte(p.Log()), 3000))
		}
	})
}

// TestReadmeSDKs runs the README's Node snippets for the three SDKs.
func TestReadmeSDKs(t *testing.T) {
	t.Parallel()
	node := needNode(t, "openai")
	p := startSlipstream(t, readmeMockConfig)
	for _, name := range []string{"sdk-openai", "sdk-anthropic", "sdk-genai"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(filepath.Join(e2eDir(), "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, name+".mjs")
			if err := os.WriteFile(script, []byte(strings.ReplaceAll(readmeBlock(t, name), readmeAddr, p.URL)), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(node, script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "SLIPSTREAM_KEY=slipstream-local")
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != mockDefaultReply {
				t.Fatalf("node %s: %v\n%s", name, err, out)
			}
		})
	}
}
