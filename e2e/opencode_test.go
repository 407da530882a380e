package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// opencodeBin is OpenCode's native binary (the opencode-ai package's bin,
// or its platform package's).
func opencodeBin(t *testing.T) string {
	t.Helper()
	plat := "opencode-" + nodePlatform() + "-" + goArchNode()
	return nativeBin(t, "opencode-ai", "bin/opencode.exe", plat, "bin/opencode")
}

// opencodeProviders are the AI SDK packages OpenCode speaks each client
// dialect with (bundled in its binary: nothing is downloaded), and the
// path under slipstream's address each takes as its baseURL.
var opencodeProviders = map[string]struct{ npm, path string }{
	dialectChat:      {"@ai-sdk/openai-compatible", "/v1"},
	dialectResponses: {"@ai-sdk/openai", "/v1"},
	dialectAnthropic: {"@ai-sdk/anthropic", "/v1"},
	dialectGemini:    {"@ai-sdk/google", "/v1beta"},
}

// opencodeConfig is opencode.json with one provider "slipstream" speaking
// dialect at proxyURL, serving model, with the bash tool allowed and
// sharing and updates off.
func opencodeConfig(proxyURL, dialect, model string) string {
	pr := opencodeProviders[dialect]
	return `{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "permission": {"bash": "allow"},
  "provider": {
    "slipstream": {
      "npm": ` + js(pr.npm) + `,
      "name": "slipstream",
      "options": {"baseURL": ` + js(proxyURL+pr.path) + `, "apiKey": "{env:SLIPSTREAM_KEY}"},
      "models": {` + js(model) + `: {}}
    }
  }
}
`
}

// opencodeOffline keeps OpenCode off the network: no models.dev fetch,
// update, LSP download, default plugins or Claude Code files.
var opencodeOffline = []string{
	"OPENCODE_DISABLE_AUTOUPDATE=1",
	"OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
	"OPENCODE_DISABLE_SHARE=1",
	"OPENCODE_DISABLE_CLAUDE_CODE=1",
}

// opencodeHome is a fresh HOME whose ~/.config/opencode holds config, and
// its environment. OpenCode installs its plugin package
// (@opencode-ai/plugin) from the npm registry into each config directory
// whose node_modules is missing or whose package-lock.json lacks it; the
// directory gets both, so no run reaches for the registry.
func opencodeHome(t *testing.T, config string) []string {
	t.Helper()
	home, env := agentHome(t)
	dir := filepath.Join(home, ".config", "opencode")
	writeFile(t, filepath.Join(dir, "opencode.json"), config)
	writeFile(t, filepath.Join(dir, "package-lock.json"), `{"lockfileVersion":3,"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`)
	if err := os.Mkdir(filepath.Join(dir, "node_modules"), 0o700); err != nil {
		t.Fatal(err)
	}
	return append(env, opencodeOffline...)
}

// runOpenCode runs `opencode run -m slipstream/MODEL PROMPT` in dir with a
// fresh HOME whose opencode.json points at p in dialect.
func runOpenCode(t *testing.T, p *proxy, dialect, model, dir, prompt string) cliResult {
	t.Helper()
	bin := opencodeBin(t)
	env := append(opencodeHome(t, opencodeConfig(p.URL, dialect, model)), "SLIPSTREAM_KEY="+testKey)
	return runCLI(t, bin, []string{"run", "-m", "slipstream/" + model, prompt}, dir, env)
}

var opencodeAgent = &agent{
	name:      "opencode",
	dialects:  []string{dialectChat, dialectResponses, dialectAnthropic, dialectGemini},
	shellTool: "bash",
	shellArgs: func(word string) string {
		return js(map[string]string{"command": "echo " + word, "description": "Print the word"})
	},
	need: func(t *testing.T) { opencodeBin(t) },
	run:  runOpenCode,
}

func TestOpenCode(t *testing.T) { testAgent(t, opencodeAgent) }
