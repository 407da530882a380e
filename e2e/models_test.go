package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// runClaudeArgs runs `claude -p PROMPT --output-format json ARGS...` like
// runClaude, but chooses no model: Claude Code sends its own default
// unless args say --model.
func runClaudeArgs(t *testing.T, p *proxy, dir, prompt string, args ...string) cliResult {
	t.Helper()
	home := t.TempDir()
	return runCLI(t, claudeBin(t), append([]string{"-p", prompt, "--output-format", "json"}, args...), dir, []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL=" + p.URL,
		"ANTHROPIC_API_KEY=" + testKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	})
}

// accessModels returns the client-facing model names of the generation
// requests in slipstream's access log, in order.
func accessModels(log string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`route=/v1/messages dialect=\S+ provider=\S+ credential=\S+ model=("(?:[^"\\]|\\.)*"|\S+)`).FindAllStringSubmatch(log, -1) {
		name := m[1]
		if uq, err := strconv.Unquote(name); err == nil {
			name = uq
		}
		out = append(out, name)
	}
	return out
}

// patternAliasConfig serves the stub's models only through patterns, and
// every Claude model name through one pattern alias.
func patternAliasConfig(baseURL string) string {
	return fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - name: e2e
    key: %s
providers:
  - name: stub
    kind: openai
    api: chat
    base_url: %s
    keys: ["sk-upstream-stub-key"]
    models: ["gpt-*"]
aliases:
  "claude-*": stub/gpt-e2e-pattern
timeouts:
  keepalive: 0s
  first_byte: 30s
log:
  access: true
`, testKey, baseURL)
}

// TestClaudeCodePatternAlias: with only a pattern alias for Claude names,
// Claude Code completes a turn with its default model and with --model
// sonnet and --model opus; each name it sends reaches the upstream as the
// alias's model, and /v1/models lists those names, never the pattern.
func TestClaudeCodePatternAlias(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	cases := []struct {
		name string
		args []string
		want string // the name Claude Code 2.1.197 sends for its main loop
	}{
		{"default", nil, "claude-opus-4-8"},
		{"sonnet", []string{"--model", "sonnet"}, "claude-sonnet-5"},
		{"opus", []string{"--model", "opus"}, "claude-opus-4-8"},
		// The 1M-context form: Claude Code strips "[1m]" from the model
		// it sends and asks for the window with an anthropic-beta value.
		{"opus_1m", []string{"--model", "opus[1m]"}, "claude-opus-4-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const answer = "PONG through a pattern alias"
			s := newStub(t, dialectChat, func(r *stubReq) stubAnswer { return stubAnswer{Text: answer} })
			p := startSlipstream(t, patternAliasConfig(s.BaseURL()))
			res := runClaudeArgs(t, p, t.TempDir(), "Reply with the word PONG.", c.args...)
			wantClaudeResult(t, res, answer, s)
			for _, r := range s.Requests() {
				if m := upstreamModel(dialectChat, r); m != "gpt-e2e-pattern" {
					t.Errorf("upstream model = %q, want the alias's gpt-e2e-pattern", m)
				}
			}
			names := accessModels(p.Log())
			t.Logf("Claude Code sent models %q", names)
			if !contains(names, c.want) {
				t.Errorf("Claude Code's requests named %q, want %q among them", names, c.want)
			}
			if c.name == "default" {
				wantModelList(t, p, names)
			}
		})
	}
}

// wantModelList checks that GET /v1/models (Anthropic shape, as Claude
// Code asks) lists every name in want and holds no pattern.
func wantModelList(t *testing.T, p *proxy, want []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", p.URL+"/v1/models", nil)
	req.Header.Set("X-Api-Key", testKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var list struct {
		Data []struct {
			Type, ID string
		}
	}
	if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/models: %d %s", resp.StatusCode, b)
	}
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
		if strings.ContainsAny(d.ID, "*?") {
			t.Errorf("/v1/models lists the pattern %q", d.ID)
		}
	}
	for _, w := range want {
		if !contains(ids, w) {
			t.Errorf("/v1/models lists %q, want %q among them", ids, w)
		}
	}
}

// mockToolConfig serves every model from the mock.
func mockToolConfig() string {
	return fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - name: e2e
    key: %s
providers:
  - name: mock
    kind: mock
    models: ["*"]
timeouts:
  keepalive: 0s
log:
  access: true
`, testKey)
}

// mockToolAnswer is how the mock answers once a tool result came back: it
// quotes the output of `echo slipstream-mock`.
const mockToolAnswer = "The tool returned: slipstream-mock"

// TestClaudeCodeMockBash: asked to "call Bash", the mock calls Claude
// Code's Bash tool with a command that passes its schema; Claude Code
// runs it and sends the output back, which the mock quotes in its answer.
func TestClaudeCodeMockBash(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	p := startSlipstream(t, mockToolConfig())
	res := runClaudeArgs(t, p, t.TempDir(), "call Bash", "--model", "claude-sonnet-5", "--allowedTools", "Bash")
	var out claudeOutput
	err := json.Unmarshal(lastJSONLine(res.Stdout), &out)
	if res.Code != 0 || err != nil || out.IsError || !strings.HasPrefix(out.Result, mockToolAnswer) {
		t.Fatalf("claude: exit %d, parse error %v, result %+v; want the mock quoting the Bash output %q\nstdout:\n%s\nstderr:\n%s",
			res.Code, err, out, mockToolAnswer, clip(res.Stdout, 3000), clip(res.Stderr, 3000))
	}
	t.Logf("claude result: %q after %d turns", out.Result, out.NumTurn)
	if out.NumTurn < 2 {
		t.Errorf("claude ran %d turns, want the tool call and the answer after it", out.NumTurn)
	}
}

// TestCodexMockExecCommand: asked to "call exec_command", the mock calls
// Codex's exec_command with a cmd that passes its schema; Codex runs it
// and sends the output back, which the mock quotes in its answer.
func TestCodexMockExecCommand(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	p := startSlipstream(t, mockToolConfig())
	dir := t.TempDir()
	res := runCodex(t, p, codexModel, dir, "call exec_command")
	ev := parseCodexJSONL(res.Stdout)
	if res.Code != 0 || !ev.Completed || !strings.HasPrefix(ev.Answer, "The tool returned:") || !strings.Contains(ev.Answer, "slipstream-mock") {
		t.Fatalf("codex: exit %d, completed %v, answer %q, errors %q; want the mock quoting the exec_command output\nstdout:\n%s\nstderr:\n%s",
			res.Code, ev.Completed, ev.Answer, ev.Errors, clip(res.Stdout, 3000), clip(res.Stderr, 4000))
	}
	t.Logf("codex answer: %q", ev.Answer)
	if !strings.Contains(string(res.Stdout), `"command_execution"`) && !strings.Contains(string(res.Stdout), "echo slipstream-mock") {
		t.Errorf("codex printed no command execution:\n%s", clip(res.Stdout, 3000))
	}
	if _, err := os.Stat(filepath.Join(dir, "slipstream-mock.txt")); err == nil {
		t.Errorf("exec_command must not have written files")
	}
}

// TestCodexMockApplyPatch: asked to "call apply_patch", the mock sends
// Codex's free-text apply_patch tool a patch that adds one file; Codex
// applies it in its working directory and sends the result back.
func TestCodexMockApplyPatch(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	p := startSlipstream(t, mockToolConfig())
	dir := t.TempDir()
	res := runCodex(t, p, codexModel, dir, "call apply_patch")
	ev := parseCodexJSONL(res.Stdout)
	if res.Code != 0 || !ev.Completed || !strings.HasPrefix(ev.Answer, "The tool returned:") {
		t.Fatalf("codex: exit %d, completed %v, answer %q, errors %q\nstdout:\n%s\nstderr:\n%s",
			res.Code, ev.Completed, ev.Answer, ev.Errors, clip(res.Stdout, 3000), clip(res.Stderr, 4000))
	}
	t.Logf("codex answer: %q", ev.Answer)
	if b, err := os.ReadFile(filepath.Join(dir, "slipstream-mock.txt")); err != nil || string(b) != "slipstream-mock\n" {
		t.Errorf("the mock's patch was not applied: %q, %v", b, err)
	}
}

// TestClaudeCode1MContext pins what Claude Code 2.1.197 sends for its
// 1M-context form, which is also its default (opus[1m]): the base model
// name in the body and the context-1m beta in anthropic-beta, which the
// same-dialect path forwards to an Anthropic upstream unchanged.
func TestClaudeCode1MContext(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	for _, args := range [][]string{nil, {"--model", "opus[1m]"}} {
		s := newStub(t, dialectAnthropic, func(r *stubReq) stubAnswer { return stubAnswer{Text: "PONG with 1M"} })
		p := startSlipstream(t, upstreamConfig("anthropic", "", s.BaseURL()))
		res := runClaudeArgs(t, p, t.TempDir(), "Reply with PONG.", args...)
		wantClaudeResult(t, res, "PONG with 1M", s)
		for _, r := range s.Requests() {
			if m := upstreamModel(dialectAnthropic, r); m != "claude-opus-4-8" {
				t.Errorf("%v: upstream model %q, want claude-opus-4-8", args, m)
			}
			if b := r.Header.Get("Anthropic-Beta"); !strings.Contains(b, "context-1m-2025-08-07") {
				t.Errorf("%v: anthropic-beta %q lacks context-1m-2025-08-07", args, b)
			}
		}
	}
}
