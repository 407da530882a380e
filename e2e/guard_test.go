package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"slipstream/guard/guardtest"
)

// guardedConfig is upstreamConfig with guardrails on: AWS key ids are
// redacted with restore, every other default rule redacts.
func guardedConfig(kind, api, baseURL string) string {
	return upstreamConfig(kind, api, baseURL) + `guardrails:
  rules:
    aws_access_key_id: {action: redact, restore: true}
`
}

var e2ePlaceholder = regexp.MustCompile(`\[REDACTED:aws_access_key_id:[0-9a-f]{6}\]`)

// awsKeyID is a generated AWS access key id (never a real one).
func awsKeyID(t *testing.T) string {
	t.Helper()
	for _, s := range guardtest.Secrets(11, 1) {
		if s.Rule == "aws_access_key_id" {
			return s.Value
		}
	}
	t.Fatal("the corpus has no aws_access_key_id")
	return ""
}

// guardLoop is the stub's side of a tool loop in which the agent reads a
// file holding a secret and is asked to write it elsewhere: it records
// every request that reached it and the placeholder the secret became.
type guardLoop struct {
	mu       sync.Mutex
	secret   string
	leaked   bool   // a request held the secret
	ph       string // the placeholder seen in a request
	requests int
}

// saw records r and returns the placeholder seen so far.
func (g *guardLoop) saw(r *stubReq) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests++
	if bytes.Contains(r.Body, []byte(g.secret)) {
		g.leaked = true
	}
	if m := e2ePlaceholder.Find(r.Body); m != nil {
		g.ph = string(m)
	}
	return g.ph
}

func (g *guardLoop) check(t *testing.T, s *stub) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leaked {
		t.Errorf("the upstream received the secret\n%s", s.Dump())
	}
	if g.ph == "" {
		t.Errorf("the upstream never received a placeholder\n%s", s.Dump())
	}
}

// TestGuardClaudeCode: Claude Code reads .env (a tool result holding an
// AWS key id), and writes the key into a config file with the Write tool
// the model calls with the placeholder; the provider never receives the
// key, and the file holds it: restored on the way back.
func TestGuardClaudeCode(t *testing.T) {
	t.Parallel()
	claudeBin(t)
	dir := t.TempDir()
	secret := awsKeyID(t)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("AWS_ACCESS_KEY_ID="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "deploy.conf")
	g := &guardLoop{secret: secret}
	final := "The key is in deploy.conf."
	s := newStub(t, dialectAnthropic, func(r *stubReq) stubAnswer {
		ph := g.saw(r)
		names := toolNames(dialectAnthropic, r.JSON)
		if !contains(names, "Read") {
			return stubAnswer{Text: final} // a side call (a title)
		}
		_, results := toolHistory(dialectAnthropic, r.JSON)
		switch {
		case len(results) == 0:
			return stubAnswer{Tool: "Read", ToolArgs: js(map[string]string{"file_path": filepath.Join(dir, ".env")}), CallID: "toolu_read_01"}
		case len(results) == 1 && ph != "":
			return stubAnswer{Tool: "Write", ToolArgs: js(map[string]string{"file_path": out, "content": "aws_key = " + ph + "\n"}), CallID: "toolu_write_01"}
		}
		return stubAnswer{Text: final}
	})
	p := startSlipstream(t, guardedConfig("anthropic", "", s.BaseURL()))
	res := runClaudeWith(t, p, "claude-e2e-guard", dir, "Copy the AWS key id from .env into deploy.conf.", "--allowedTools", "Read,Write")
	wantClaudeResult(t, res, final, s)
	g.check(t, s)
	got, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(got)) != "aws_key = "+secret {
		t.Errorf("deploy.conf = %q, %v; want the key restored", got, err)
	}
}

// TestGuardCodex: Codex runs `cat .env` (a tool result holding an AWS key
// id), then applies a patch the model writes with the placeholder; the
// provider never receives the key, and the file Codex writes holds it.
func TestGuardCodex(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	dir := t.TempDir()
	secret := awsKeyID(t)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("AWS_ACCESS_KEY_ID="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &guardLoop{secret: secret}
	final := "The key is in deploy.conf."
	s := newStub(t, dialectResponses, func(r *stubReq) stubAnswer {
		ph := g.saw(r)
		names := toolNames(dialectResponses, r.JSON)
		_, results := toolHistory(dialectResponses, r.JSON)
		switch {
		case len(results) == 0:
			for _, n := range codexShellTools {
				if contains(names, n) {
					return stubAnswer{Tool: n, ToolArgs: codexShellCat(n, ".env"), CallID: "call_cat_01"}
				}
			}
		case len(results) == 1 && ph != "" && contains(names, "apply_patch"):
			patch := "*** Begin Patch\n*** Add File: deploy.conf\n+aws_key = " + ph + "\n*** End Patch\n"
			return stubAnswer{Tool: "apply_patch", ToolArgs: patch, CallID: "call_patch_01", Custom: true}
		}
		return stubAnswer{Text: final}
	})
	p := startSlipstream(t, guardedConfig("openai", "responses", s.BaseURL()))
	res := runCodex(t, p, codexModel, dir, "Copy the AWS key id from .env into deploy.conf.")
	wantCodexResult(t, res, final, s)
	g.check(t, s)
	got, err := os.ReadFile(filepath.Join(dir, "deploy.conf"))
	if err != nil || strings.TrimSpace(string(got)) != "aws_key = "+secret {
		t.Errorf("deploy.conf = %q, %v; want the key restored", got, err)
	}
}

// codexShellCat are the arguments that run `cat file` with each of
// Codex's command tools.
func codexShellCat(tool, file string) string {
	switch tool {
	case "exec_command":
		return js(map[string]any{"cmd": "cat " + file})
	case "shell_command":
		return js(map[string]any{"command": "cat " + file})
	}
	return js(map[string]any{"command": []string{"cat", file}})
}
