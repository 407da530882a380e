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

// claudeBin is Claude Code's native binary.
func claudeBin(t *testing.T) string {
	t.Helper()
	plat := "@anthropic-ai/claude-code-" + nodePlatform() + "-" + goArchNode()
	return nativeBin(t, "@anthropic-ai/claude-code", "bin/claude.exe", plat, "claude")
}

// runClaude runs `claude -p PROMPT --output-format json` against the proxy
// with an offline environment (no update check, telemetry or
// non-essential traffic) and a fresh
// HOME, in dir.
func runClaude(t *testing.T, p *proxy, model, dir, prompt string) cliResult {
	t.Helper()
	return runClaudeWith(t, p, model, dir, prompt)
}

// runClaudeWith is runClaude with more command-line arguments.
func runClaudeWith(t *testing.T, p *proxy, model, dir, prompt string, args ...string) cliResult {
	t.Helper()
	home := t.TempDir()
	args = append([]string{"-p", prompt, "--output-format", "json", "--model", model}, args...)
	return runCLI(t, claudeBin(t), args, dir, []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL=" + p.URL,
		"ANTHROPIC_API_KEY=" + testKey,
		"ANTHROPIC_MODEL=" + model,
		"ANTHROPIC_SMALL_FAST_MODEL=" + model,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
	})
}

// claudeOutput is `--output-format json`'s result object.
type claudeOutput struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Result  string `json:"result"`
	IsError bool   `json:"is_error"`
	NumTurn int    `json:"num_turns"`
	Usage   struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	} `json:"usage"`
}

// wantClaudeResult checks exit 0 and the final text in Claude Code's JSON,
// and that the stub's usage (stubIn/stubOut per upstream call) reached it.
func wantClaudeResult(t *testing.T, res cliResult, want string, s *stub) {
	t.Helper()
	var out claudeOutput
	err := json.Unmarshal(lastJSONLine(res.Stdout), &out)
	if res.Code != 0 || err != nil || out.IsError || out.Result != want {
		t.Errorf("claude: exit %d, parse error %v, result %+v; want exit 0, is_error false, result %q\nstdout:\n%s\nstderr:\n%s\nupstream requests:\n%s",
			res.Code, err, out, want, clip(res.Stdout, 3000), clip(res.Stderr, 3000), s.Dump())
		return
	}
	calls := len(s.Requests())
	if out.Usage.Input != stubIn*calls || out.Usage.Output != stubOut*calls {
		t.Errorf("claude usage = %+v, want input %d, output %d (%d upstream calls)", out.Usage, stubIn*calls, stubOut*calls, calls)
	}
}

// lastJSONLine returns the last line of b that starts with '{'.
func lastJSONLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "{") {
			return []byte(lines[i])
		}
	}
	return b
}

// claudeUpstreams are the provider dialects Claude Code is served by.
var claudeUpstreams = []struct{ name, kind, api, dialect string }{
	{"chat", "openai", "chat", dialectChat},
	{"responses", "openai", "responses", dialectResponses},
	{"gemini", "gemini", "", dialectGemini},
	{"anthropic", "anthropic", "", dialectAnthropic}, // same dialect: pass-through
}

func TestClaudeCode(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	for _, up := range claudeUpstreams { // each run: its own stub, slipstream, HOME
		t.Run(up.name+"/text", func(t *testing.T) { t.Parallel(); testClaudeText(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/tool", func(t *testing.T) { t.Parallel(); testClaudeTool(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/thinking_tool", func(t *testing.T) { t.Parallel(); testClaudeThinkingTool(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/truncated", func(t *testing.T) { t.Parallel(); testClaudeTruncated(t, up.kind, up.api, up.dialect) })
	}
}

func testClaudeText(t *testing.T, kind, api, dialect string) {
	want := fmt.Sprintf("PONG from the %s stub ✓ \"quoted\"", dialect)
	s := newStub(t, dialect, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runClaude(t, p, "gpt-e2e-"+dialect, t.TempDir(), "Reply with the word PONG.")
	wantClaudeResult(t, res, want, s)
	main := mainRequests(t, s)
	if len(main) == 0 {
		return
	}
	r := main[0].JSON
	if m := upstreamModel(dialect, main[0]); m != "gpt-e2e-"+dialect {
		t.Errorf("upstream model = %q, want gpt-e2e-%s", m, dialect)
	}
	if !contains(toolNames(dialect, r), "Read") {
		t.Errorf("upstream request offers tools %v, want Claude Code's Read among them", toolNames(dialect, r))
	}
	if !strings.Contains(string(main[0].Body), "Reply with the word PONG.") {
		t.Errorf("upstream request lacks the prompt: %s", clip(main[0].Body, 2000))
	}
}

func testClaudeTool(t *testing.T, kind, api, dialect string) {
	dir := t.TempDir()
	marker := "MARKER-" + strings.ReplaceAll(dialect, "_", "-") + "-7f3a9"
	file := filepath.Join(dir, "marker.txt")
	if err := os.WriteFile(file, []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const callID = "call_stub_read_01"
	final := "The file holds the marker, all done."
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		if len(results) > 0 || !contains(toolNames(dialect, r.JSON), "Read") {
			return stubAnswer{Text: final}
		}
		return stubAnswer{Tool: "Read", ToolArgs: js(map[string]string{"file_path": file}), CallID: callID}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runClaude(t, p, "gpt-e2e-"+dialect, dir, "Read marker.txt and tell me what it says.")
	wantClaudeResult(t, res, final, s)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (tool call, then its result)\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, "Read", marker)
}

// mainRequests are the generation requests that offer tools (the agent's
// main loop, not side calls such as titles).
func mainRequests(t *testing.T, s *stub) []*stubReq {
	t.Helper()
	var out []*stubReq
	for _, r := range s.Requests() {
		if len(toolNames(s.dialect, r.JSON)) > 0 {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Errorf("upstream saw no request offering tools\n%s", s.Dump())
	}
	return out
}

// wantToolRoundTrip checks that r's history holds the stub's tool call
// (same id and name) and a result paired with it by id whose text holds
// want. Gemini calls have no id on the wire: there the call and result
// must pair with each other (by id when slipstream adds one, else name).
func wantToolRoundTrip(t *testing.T, dialect string, r *stubReq, callID, name, want string) {
	t.Helper()
	calls, results := toolHistory(dialect, r.JSON)
	if dialect == dialectGemini && len(calls) == 1 {
		callID = calls[0].ID
	}
	if len(calls) != 1 || calls[0].ID != callID || calls[0].Name != name {
		t.Errorf("history tool calls = %+v, want one %s call with id %q\nrequest: %s", calls, name, callID, clip(r.Body, 4000))
	}
	if len(results) != 1 || results[0].ID != callID || !strings.Contains(results[0].Text, want) {
		t.Errorf("history tool results = %+v, want one paired with %q holding %q\nrequest: %s", results, callID, want, clip(r.Body, 4000))
	}
}

// testClaudeThinkingTool: the upstream reasons before its tool call (a
// Responses reasoning item with encrypted_content, or Chat
// reasoning_content) and before its final answer. Claude Code must still
// complete the turn with only the answer as its result, and on a Responses
// upstream the next request must carry the reasoning back with its
// encrypted_content intact (Claude Code replays it as a signed thinking
// block).
func testClaudeThinkingTool(t *testing.T, kind, api, dialect string) {
	dir := t.TempDir()
	marker := "MARKER-thinking-" + dialect
	file := filepath.Join(dir, "marker.txt")
	if err := os.WriteFile(file, []byte(marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const callID = "call_stub_read_02"
	const sig = "gAAAAB-stub-encrypted-reasoning_0123456789+/=="
	final := "Read the marker after thinking, all done."
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		if len(results) > 0 || !contains(toolNames(dialect, r.JSON), "Read") {
			return stubAnswer{Text: final, Thinking: "The file was read; answer now.", Signature: sig + "-2"}
		}
		return stubAnswer{Tool: "Read", ToolArgs: js(map[string]string{"file_path": file}), CallID: callID,
			Thinking: "I should read the file first.", Signature: sig}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runClaude(t, p, "gpt-e2e-"+dialect, dir, "Read marker.txt and tell me what it says.")
	wantClaudeResult(t, res, final, s)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2 (tool call, then its result)\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, "Read", marker)
	wantSignatureBack(t, dialect, main[1], sig)
}

// wantSignatureBack checks that a follow-up request to a Responses or
// Anthropic upstream carries the reasoning of the previous answer with its
// opaque signature intact (encrypted_content or signature).
func wantSignatureBack(t *testing.T, dialect string, r *stubReq, sig string) {
	t.Helper()
	if dialect != dialectResponses && dialect != dialectAnthropic {
		return
	}
	th := thinkingHistory(dialect, r.JSON)
	if len(th) != 1 || th[0].Signature != sig {
		t.Errorf("reasoning in the follow-up request = %+v, want one item with signature/encrypted_content %q\nrequest: %s", th, sig, clip(r.Body, 3000))
	}
}

// testClaudeTruncated: the upstream's first stream stops halfway, without
// its terminal event. slipstream must not turn that into a success: Claude
// Code either retries (and then shows the whole answer from the second,
// complete, upstream answer) or reports an error; a successful result
// holding a partial answer is the failure this test exists for.
func testClaudeTruncated(t *testing.T, kind, api, dialect string) {
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
	res := runClaude(t, p, "gpt-e2e-"+dialect, t.TempDir(), "Reply with the word PONG.")
	var out claudeOutput
	err := json.Unmarshal(lastJSONLine(res.Stdout), &out)
	t.Logf("claude after a truncated upstream stream: exit %d, is_error %v, result %q, %d upstream requests", res.Code, out.IsError, out.Result, len(s.Requests()))
	if res.Code == 0 && err == nil && !out.IsError && out.Result != full {
		t.Errorf("claude reported success with result %q after a truncated upstream stream; want the whole answer %q (after a retry) or an error\nupstream requests:\n%s", out.Result, full, s.Dump())
	}
	if len(s.Requests()) < 2 && (res.Code == 0 && !out.IsError) {
		t.Errorf("claude succeeded without retrying the truncated turn")
	}
}
