package e2e

import (
	"path/filepath"
	"testing"
)

// piAPIs are pi's names for the client dialects and the path under
// slipstream's address each takes as its baseUrl.
var piAPIs = map[string]struct{ api, path string }{
	dialectChat:      {"openai-completions", "/v1"},
	dialectResponses: {"openai-responses", "/v1"},
	dialectAnthropic: {"anthropic-messages", ""},
	dialectGemini:    {"google-generative-ai", "/v1beta"},
}

// piModels is ~/.pi/agent/models.json with one provider "slipstream"
// speaking dialect at proxyURL, serving model; its key is read from
// SLIPSTREAM_KEY.
func piModels(proxyURL, dialect, model string) string {
	a := piAPIs[dialect]
	return `{
  "providers": {
    "slipstream": {
      "baseUrl": ` + js(proxyURL+a.path) + `,
      "api": ` + js(a.api) + `,
      "apiKey": "SLIPSTREAM_KEY",
      "models": [{"id": ` + js(model) + `}]
    }
  }
}
`
}

// piCmd is node and pi's cli.js; it skips the test when the package is
// missing.
func piCmd(t *testing.T) (node, script string) {
	t.Helper()
	node = needNode(t, "@mariozechner/pi-coding-agent")
	return node, filepath.Join(e2eDir(), "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js")
}

// runPi runs `pi -p --model slipstream/MODEL PROMPT` offline with a fresh
// HOME whose models.json points at p in dialect.
func runPi(t *testing.T, p *proxy, dialect, model, dir, prompt string) cliResult {
	t.Helper()
	node, script := piCmd(t)
	home, env := agentHome(t)
	writeFile(t, filepath.Join(home, ".pi", "agent", "models.json"), piModels(p.URL, dialect, model))
	return runCLI(t, node, []string{script, "-p", "--model", "slipstream/" + model, prompt}, dir, append(env,
		"PI_OFFLINE=1",
		"PI_TELEMETRY=0",
		"SLIPSTREAM_KEY="+testKey,
	))
}

var piAgent = &agent{
	name:      "pi",
	dialects:  []string{dialectChat, dialectResponses, dialectAnthropic, dialectGemini},
	shellTool: "bash",
	shellArgs: commandArgs,
	need:      func(t *testing.T) { piCmd(t) },
	run:       runPi,
}

func TestPi(t *testing.T) { testAgent(t, piAgent) }
