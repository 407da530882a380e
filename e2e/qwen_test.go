package e2e

import (
	"path/filepath"
	"testing"
)

// qwenSettings is ~/.qwen/settings.json for the tests: no usage
// statistics, telemetry or update checks.
const qwenSettings = `{
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}
`

// qwenCmd is node and Qwen Code's cli.js; it skips the test when the
// package is missing.
func qwenCmd(t *testing.T) (node, script string) {
	t.Helper()
	node = needNode(t, "@qwen-code/qwen-code")
	return node, filepath.Join(e2eDir(), "node_modules", "@qwen-code", "qwen-code", "cli.js")
}

// runQwen runs `qwen -p PROMPT --yolo` against p over Chat Completions
// (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL) with a fresh HOME. Qwen
// Code sends loopback traffic through HTTPS_PROXY too, so it runs without
// the trap proxy; qwenSettings keep it offline.
func runQwen(t *testing.T, p *proxy, _, model, dir, prompt string) cliResult {
	t.Helper()
	node, script := qwenCmd(t)
	home, env := agentHome(t)
	writeFile(t, filepath.Join(home, ".qwen", "settings.json"), qwenSettings)
	return runCLIWith(t, node, []string{script, "-p", prompt, "--yolo"}, dir, append(env,
		"OPENAI_BASE_URL="+p.URL+"/v1",
		"OPENAI_API_KEY="+testKey,
		"OPENAI_MODEL="+model,
	), false)
}

var qwenAgent = &agent{
	name:      "qwen",
	dialects:  []string{dialectChat},
	shellTool: "run_shell_command",
	shellArgs: func(word string) string {
		return js(map[string]any{"command": "echo " + word, "is_background": false})
	},
	need: func(t *testing.T) { qwenCmd(t) },
	run:  runQwen,
}

func TestQwenCode(t *testing.T) { testAgent(t, qwenAgent) }
