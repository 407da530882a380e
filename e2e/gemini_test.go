package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// geminiSettings is ~/.gemini/settings.json for the tests: the API-key
// sign-in (GOOGLE_GEMINI_BASE_URL alone selects a gateway sign-in that
// -p refuses), no usage statistics, telemetry or update checks.
const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}
`

// geminiCmd is node and Gemini CLI's bundle; it skips the test when the
// package is missing.
func geminiCmd(t *testing.T) (node, script string) {
	t.Helper()
	node = needNode(t, "@google/gemini-cli")
	return node, filepath.Join(e2eDir(), "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
}

// geminiEnv is the offline environment every Gemini CLI run gets: a fresh
// HOME holding geminiSettings, a trusted working directory.
func geminiEnv(t *testing.T) []string {
	t.Helper()
	home, env := agentHome(t)
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), geminiSettings)
	return append(env, "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false")
}

// runGemini runs `gemini -p PROMPT --yolo` against p (GOOGLE_GEMINI_BASE_URL,
// GEMINI_API_KEY), with model when it is not "".
func runGemini(t *testing.T, p *proxy, model, dir, prompt string) cliResult {
	t.Helper()
	node, script := geminiCmd(t)
	args := []string{script, "-p", prompt, "--yolo"}
	if model != "" {
		args = append(args, "-m", model)
	}
	return runCLI(t, node, args, dir, append(geminiEnv(t),
		"GOOGLE_GEMINI_BASE_URL="+p.URL,
		"GEMINI_API_KEY="+testKey,
	))
}

var geminiAgent = &agent{
	name:      "gemini",
	dialects:  []string{dialectGemini},
	shellTool: "run_shell_command",
	shellArgs: commandArgs,
	asksJSON:  true,
	need:      func(t *testing.T) { geminiCmd(t) },
	// The default model: Gemini CLI first asks for a routing decision
	// as JSON, so every upstream meets its structured-output request.
	run: func(t *testing.T, p *proxy, _, _, dir, prompt string) cliResult {
		return runGemini(t, p, "", dir, prompt)
	},
}

func TestGeminiCLI(t *testing.T) {
	t.Parallel()
	testAgent(t, geminiAgent)
	t.Run("mock/default_model_fast", testGeminiDefaultModelFast)
}

// geminiFastLimit bounds a Gemini CLI answer from the mock with its
// default model: the routing call must get JSON at once, not fall back
// after retries.
const geminiFastLimit = 10 * time.Second

// testGeminiDefaultModelFast runs Gemini CLI with its default model (a
// JSON routing call, then the answer) against the mock and wants the
// answer in under geminiFastLimit, the routing call answered once.
func testGeminiDefaultModelFast(t *testing.T) {
	p := startSlipstream(t, mockConfig(agentMockReply))
	res := runGemini(t, p, "", t.TempDir(), "Reply with the word PONG.")
	wantAgentOutput(t, geminiAgent, res, agentMockReply, p.Log)
	if res.Elapsed >= geminiFastLimit {
		t.Errorf("gemini with its default model took %v against the mock, want under %v\nslipstream log:\n%s", res.Elapsed, geminiFastLimit, clip([]byte(p.Log()), 4000))
	}
	if n := strings.Count(p.Log(), ":generateContent dialect=gemini"); n > 3 {
		t.Errorf("slipstream served %d Gemini calls for one prompt; the routing call was retried\n%s", n, clip([]byte(p.Log()), 4000))
	}
}
