package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The README's quick starts for Gemini CLI, OpenCode, Qwen Code and pi,
// each run as written against the mock: the config files as the README
// shows them (with the test's offline settings added), the exported
// environment, and the snippet's last line as the command.

// shellWords splits a command line on spaces, keeping double-quoted
// words (without their quotes) whole.
func shellWords(line string) []string {
	var words []string
	var b strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, b.String())
				b.Reset()
			}
			inWord = false
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words
}

// readmeCommand returns the README snippet's environment and the words of
// its last line, which must run bin.
func readmeCommand(t *testing.T, name string, p *proxy, bin string) (env, words []string) {
	t.Helper()
	env, rest := readmeExports(t, readmeBlock(t, name), p)
	words = shellWords(rest[len(rest)-1])
	if len(words) == 0 || words[0] != bin {
		t.Fatalf("the snippet does not end by running %s: %q", bin, rest)
	}
	return env, words[1:]
}

// mergeJSON returns the README's JSON object with extra's top-level keys
// added (objects merged one level deep).
func mergeJSON(t *testing.T, readme, extra string) string {
	t.Helper()
	var a, b map[string]any
	if err := json.Unmarshal([]byte(readme), &a); err != nil {
		t.Fatalf("README JSON: %v\n%s", err, readme)
	}
	if err := json.Unmarshal([]byte(extra), &b); err != nil {
		t.Fatal(err)
	}
	for k, v := range b {
		if m, ok := a[k].(map[string]any); ok {
			for k2, v2 := range asMap(v) {
				m[k2] = v2
			}
			continue
		}
		a[k] = v
	}
	return js(a)
}

// wantReadmeReply checks that a README run printed the mock's reply.
func wantReadmeReply(t *testing.T, name string, res cliResult) {
	t.Helper()
	if res.Code != 0 || !strings.Contains(string(res.Stdout), mockDefaultReply) {
		t.Fatalf("%s: exit %d, want exit 0 and %q\nstdout:\n%s\nstderr:\n%s", name, res.Code, mockDefaultReply, clip(res.Stdout, 3000), clip(res.Stderr, 3000))
	}
}

// TestReadmeGeminiCLI runs the README's Gemini CLI settings and
// environment (default model: routing call first) with -p.
func TestReadmeGeminiCLI(t *testing.T) {
	t.Parallel()
	node, script := geminiCmd(t)
	p := startSlipstream(t, readmeMockConfig)
	home, env := agentHome(t)
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"), mergeJSON(t, readmeBlock(t, "gemini-settings"), geminiSettings))
	readmeEnv, _ := readmeCommand(t, "gemini-env", p, "gemini")
	env = append(append(env, "GEMINI_CLI_TRUST_WORKSPACE=true"), readmeEnv...)
	res := runCLI(t, node, []string{script, "-p", "say hi"}, t.TempDir(), env)
	wantReadmeReply(t, "gemini", res)
}

// TestReadmeOpenCode runs the README's opencode.json and command.
func TestReadmeOpenCode(t *testing.T) {
	t.Parallel()
	bin := opencodeBin(t)
	p := startSlipstream(t, readmeMockConfig)
	cfg := strings.ReplaceAll(readmeBlock(t, "opencode-json"), readmeAddr, p.URL)
	env := opencodeHome(t, mergeJSON(t, cfg, `{"autoupdate": false, "share": "disabled"}`))
	readmeEnv, args := readmeCommand(t, "opencode-env", p, "opencode")
	res := runCLI(t, bin, args, t.TempDir(), append(env, readmeEnv...))
	wantReadmeReply(t, "opencode", res)
}

// TestReadmeQwenCode runs the README's Qwen Code environment and command.
func TestReadmeQwenCode(t *testing.T) {
	t.Parallel()
	node, script := qwenCmd(t)
	p := startSlipstream(t, readmeMockConfig)
	home, env := agentHome(t)
	writeFile(t, filepath.Join(home, ".qwen", "settings.json"), qwenSettings)
	readmeEnv, args := readmeCommand(t, "qwen-env", p, "qwen")
	res := runCLIWith(t, node, append([]string{script}, args...), t.TempDir(), append(env, readmeEnv...), false)
	wantReadmeReply(t, "qwen", res)
}

// TestReadmePi runs the README's pi models.json and command.
func TestReadmePi(t *testing.T) {
	t.Parallel()
	node, script := piCmd(t)
	p := startSlipstream(t, readmeMockConfig)
	home, env := agentHome(t)
	writeFile(t, filepath.Join(home, ".pi", "agent", "models.json"), strings.ReplaceAll(readmeBlock(t, "pi-models"), readmeAddr, p.URL))
	readmeEnv, args := readmeCommand(t, "pi-env", p, "pi")
	res := runCLI(t, node, append([]string{script}, args...), t.TempDir(), append(append(env, "PI_OFFLINE=1", "PI_TELEMETRY=0"), readmeEnv...))
	wantReadmeReply(t, "pi", res)
}
