package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
		skipE2E(t, "@openai/codex: the platform package %s is missing (optional dependencies omitted?); rerun `npm ci --prefix e2e`", plat)
	}
	return node, script
}

// codexConfig is CODEX_HOME/config.toml: a
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
stream_max_retries = 1
supports_websockets = false

[analytics]
enabled = false

[features]
plugins = false
`, model, proxyURL)
}

// runCodex runs `codex exec --json --skip-git-repo-check --ephemeral PROMPT` in
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
	return runCLI(t, node, []string{script, "exec", "--json", "--skip-git-repo-check", "--ephemeral", prompt}, dir, []string{
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		"PROXY_API_KEY=" + testKey,
		"RUST_LOG=warn",
	})
}

// codexEvents is what `codex exec --json` printed that the tests check:
// the last agent message and the turn's usage.
type codexEvents struct {
	Answer    string
	Completed bool
	Usage     struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	}
	Errors []string
}

func parseCodexJSONL(b []byte) codexEvents {
	var ev codexEvents
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Type string `json:"type"`
			Item struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Message string `json:"message"`
			} `json:"item"`
			Usage   json.RawMessage `json:"usage"`
			Message string          `json:"message"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e.Type == "item.completed" && e.Item.Type == "agent_message":
			ev.Answer = e.Item.Text
		case e.Type == "item.completed" && e.Item.Type == "error":
			ev.Errors = append(ev.Errors, e.Item.Message)
		case e.Type == "turn.completed":
			ev.Completed = true
			json.Unmarshal(e.Usage, &ev.Usage)
		case e.Type == "turn.failed" || e.Type == "error":
			ev.Errors = append(ev.Errors, line)
		}
	}
	return ev
}

// wantCodexResult checks exit 0, a completed turn whose last agent message
// is want, and that the stub's usage (stubIn/stubOut per upstream call)
// reached Codex.
func wantCodexResult(t *testing.T, res cliResult, want string, s *stub) {
	t.Helper()
	ev := parseCodexJSONL(res.Stdout)
	calls := len(s.Requests())
	if res.Code != 0 || !ev.Completed || ev.Answer != want {
		t.Errorf("codex: exit %d, turn completed %v, answer %q, errors %q; want exit 0, a completed turn, answer %q\nstdout:\n%s\nstderr:\n%s\nupstream requests:\n%s",
			res.Code, ev.Completed, ev.Answer, ev.Errors, want, clip(res.Stdout, 3000), clip(res.Stderr, 4000), s.Dump())
		return
	}
	if ev.Usage.Input != stubIn*calls || ev.Usage.Output != stubOut*calls {
		t.Errorf("codex usage = %+v, want input %d, output %d (%d upstream calls)", ev.Usage, stubIn*calls, stubOut*calls, calls)
	}
}

// codexUpstreams are the provider dialects Codex is served by.
var codexUpstreams = []struct{ name, kind, api, dialect string }{
	{"anthropic", "anthropic", "", dialectAnthropic},
	{"chat", "openai", "chat", dialectChat},
	{"gemini", "gemini", "", dialectGemini},
	{"responses", "openai", "responses", dialectResponses}, // same dialect: pass-through
}

func TestCodex(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	for _, up := range codexUpstreams {
		t.Run(up.name+"/text", func(t *testing.T) { t.Parallel(); testCodexText(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/tool", func(t *testing.T) { t.Parallel(); testCodexTool(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/thinking_tool", func(t *testing.T) { t.Parallel(); testCodexThinkingTool(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/truncated", func(t *testing.T) { t.Parallel(); testCodexTruncated(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/apply_patch", func(t *testing.T) { t.Parallel(); testCodexApplyPatch(t, up.kind, up.api, up.dialect) })
	}
	t.Run("gemini/signed_text", testCodexGeminiSignedText)
}

func testCodexText(t *testing.T, kind, api, dialect string) {
	want := fmt.Sprintf("PONG from the %s stub ✓ \"quoted\"", dialect)
	s := newStub(t, dialect, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	model := codexModel
	res := runCodex(t, p, model, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, want, s)
	main := mainRequests(t, s)
	if len(main) == 0 {
		return
	}
	r := main[0]
	if m := upstreamModel(dialect, r); m != model {
		t.Errorf("upstream model = %q, want %s", m, model)
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
	var mu sync.Mutex // guards tool, set by the stub's handler
	var tool string
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		names := toolNames(dialect, r.JSON)
		if len(results) > 0 {
			return stubAnswer{Text: final}
		}
		for _, n := range codexShellTools {
			if contains(names, n) {
				mu.Lock()
				tool = n
				mu.Unlock()
				return stubAnswer{Tool: n, ToolArgs: codexShellArgs(n, word), CallID: callID}
			}
		}
		t.Errorf("upstream request offers none of %v: %v", codexShellTools, names)
		return stubAnswer{Text: final}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodex(t, p, codexModel, t.TempDir(), "Run echo and tell me what it printed.")
	wantCodexResult(t, res, final, s)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (tool call, then its result)\n%s", len(main), s.Dump())
	}
	mu.Lock()
	defer mu.Unlock()
	wantToolRoundTrip(t, dialect, main[1], callID, tool, word)
}

// codexModel is a model Codex knows, so it sends its full production
// request (custom apply_patch, namespace and web_search tools, reasoning)
// rather than the fallback shape; slipstream routes it to the stub.
const codexModel = "gpt-5.5"

// testCodexApplyPatch has the stub call Codex's apply_patch, a Responses
// `custom` tool (free text with a grammar) that slipstream must offer the
// upstream as a function of one string and hand back to Codex as a
// custom_tool_call; Codex then applies the patch in its working directory.
func testCodexApplyPatch(t *testing.T, kind, api, dialect string) {
	dir := t.TempDir()
	const callID = "call_stub_patch_01"
	content := "patched through " + dialect
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+" + content + "\n*** End Patch\n"
	final := "The patch is applied, all done."
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		if len(results) > 0 || !contains(toolNames(dialect, r.JSON), "apply_patch") {
			return stubAnswer{Text: final}
		}
		if dialect == dialectResponses {
			// Same dialect: apply_patch is a custom tool on the wire.
			return stubAnswer{Tool: "apply_patch", ToolArgs: patch, CallID: callID, Custom: true}
		}
		return stubAnswer{Tool: "apply_patch", ToolArgs: js(map[string]string{"input": patch}), CallID: callID}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodex(t, p, codexModel, dir, "Create hello.txt with a patch.")
	wantCodexResult(t, res, final, s)
	if got, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || strings.TrimSpace(string(got)) != content {
		t.Errorf("hello.txt after apply_patch: %q, %v; want %q", got, err, content)
	}
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (apply_patch call, then its result)\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, "apply_patch", "hello.txt")
}

// testCodexThinkingTool: the upstream thinks before its tool call (an
// Anthropic thinking block with a signature, or Chat reasoning_content)
// and before its final answer. Codex must complete the turn with only the
// answer, and on an Anthropic upstream the next request must replay the
// thinking block, signature intact, ahead of the tool_use.
func testCodexThinkingTool(t *testing.T, kind, api, dialect string) {
	word := "thought-" + dialect
	const callID = "call_stub_shell_02"
	const sig = "EqQBCkYIBRgCKkBstub-signature_0123456789+/=="
	final := "Ran the command after thinking, all done."
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		if len(results) > 0 {
			return stubAnswer{Text: final, Thinking: "It printed the word; answer now.", Signature: sig + "-2"}
		}
		return stubAnswer{Tool: "exec_command", ToolArgs: codexShellArgs("exec_command", word), CallID: callID,
			Thinking: "I should run echo first.", Signature: sig}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodex(t, p, codexModel, t.TempDir(), "Run echo and tell me what it printed.")
	wantCodexResult(t, res, final, s)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (tool call, then its result)\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, "exec_command", word)
	wantSignatureBack(t, dialect, main[1], sig)
}

// testCodexTruncated: the upstream's first stream stops halfway, without
// its terminal event. slipstream must not fake a response.completed: Codex
// reconnects (stream_max_retries = 1) and shows the whole answer of the
// second, complete, upstream answer, or fails; success with a partial
// answer is the failure this test exists for.
func testCodexTruncated(t *testing.T, kind, api, dialect string) {
	const full = "This answer arrives whole only on the second attempt."
	var mu sync.Mutex
	n := 0
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		mu.Lock()
		defer mu.Unlock()
		n++
		return stubAnswer{Text: full, Truncate: n == 1}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodex(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	ev := parseCodexJSONL(res.Stdout)
	t.Logf("codex after a truncated upstream stream: exit %d, completed %v, answer %q, errors %q, %d upstream requests", res.Code, ev.Completed, ev.Answer, ev.Errors, len(s.Requests()))
	if res.Code == 0 && ev.Completed && ev.Answer != full {
		t.Errorf("codex completed the turn with answer %q after a truncated upstream stream; want the whole answer %q (after a retry) or a failure\nstdout:\n%s\nupstream requests:\n%s", ev.Answer, full, clip(res.Stdout, 3000), s.Dump())
	}
	if res.Code == 0 && len(s.Requests()) < 2 {
		t.Errorf("codex succeeded without retrying the truncated turn")
	}
}

// testCodexGeminiSignedText: a Gemini answer whose thoughtSignature rides
// on its last text increment must still reach Codex as one whole answer
// (one message item), not split around a reasoning item.
func testCodexGeminiSignedText(t *testing.T) {
	const full = "One answer, signed at its end."
	s := newStub(t, dialectGemini, func(r *stubReq) stubAnswer {
		return stubAnswer{Text: full, Thinking: "Think first.", Signature: "sig-on-text-0123", SignedText: true}
	})
	p := startSlipstream(t, upstreamConfig("gemini", "", s.BaseURL()))
	res := runCodex(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, full, s)
}
