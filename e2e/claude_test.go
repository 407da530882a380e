package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeBin is Claude Code's native binary.
func claudeBin(t *testing.T) string {
	t.Helper()
	plat := "@anthropic-ai/claude-code-" + nodePlatform() + "-" + goArchNode()
	return nativeBin(t, "@anthropic-ai/claude-code", "bin/claude.exe", plat, "claude")
}

// runClaude runs `claude -p PROMPT --output-format json` against the proxy
// with the offline environment of api-formats.md section G and a fresh
// HOME, in dir.
func runClaude(t *testing.T, p *proxy, model, dir, prompt string) cliResult {
	t.Helper()
	home := t.TempDir()
	return runCLI(t, claudeBin(t), []string{"-p", prompt, "--output-format", "json", "--model", model}, dir, []string{
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
}

// wantClaudeResult checks exit 0 and the final text in Claude Code's JSON.
func wantClaudeResult(t *testing.T, res cliResult, want string, s *stub) {
	t.Helper()
	var out claudeOutput
	err := json.Unmarshal(lastJSONLine(res.Stdout), &out)
	if res.Code != 0 || err != nil || out.IsError || out.Result != want {
		t.Errorf("claude: exit %d, parse error %v, result %+v; want exit 0, is_error false, result %q\nstdout:\n%s\nstderr:\n%s\nupstream requests:\n%s",
			res.Code, err, out, want, clip(res.Stdout, 3000), clip(res.Stderr, 3000), s.Dump())
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
}

func TestClaudeCode(t *testing.T) {
	claudeBin(t)
	for _, up := range claudeUpstreams {
		t.Run(up.name+"/text", func(t *testing.T) { testClaudeText(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/tool", func(t *testing.T) { testClaudeTool(t, up.kind, up.api, up.dialect) })
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
	if r["model"] != "gpt-e2e-"+dialect {
		t.Errorf("upstream model = %v, want gpt-e2e-%s", r["model"], dialect)
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
// want.
func wantToolRoundTrip(t *testing.T, dialect string, r *stubReq, callID, name, want string) {
	t.Helper()
	calls, results := toolHistory(dialect, r.JSON)
	if len(calls) != 1 || calls[0].ID != callID || calls[0].Name != name {
		t.Errorf("history tool calls = %+v, want one %s call with id %q\nrequest: %s", calls, name, callID, clip(r.Body, 4000))
	}
	if len(results) != 1 || results[0].ID != callID || !strings.Contains(results[0].Text, want) {
		t.Errorf("history tool results = %+v, want one paired with %q holding %q\nrequest: %s", results, callID, want, clip(r.Body, 4000))
	}
}
