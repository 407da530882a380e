package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Model names the generated config routes; each matches one provider.
const (
	ModelClaude    = "claude-bench"     // kind anthropic
	ModelChat      = "gpt-bench"        // kind openai, api chat
	ModelResponses = "codex-bench"      // kind openai, api responses
	ModelXlateChat = "xlate-chat-bench" // kind openai api chat, sent an Anthropic body: translated
)

// ConfigLimits are the limits written into a generated config; zero
// fields are left out (slipstream's defaults apply).
type ConfigLimits struct {
	MaxBodyBytes     int64
	MaxConcurrent    int
	MaxBytesInFlight int64
	// NoLedger turns the usage ledger off (usage: {enabled: false}); by
	// default it is on, as in slipstream's own default.
	NoLedger bool
	// Guardrails turns guardrails on with their default rules.
	Guardrails bool
}

// AppendConfig appends a slipstream config (README, Configuration) listening on
// listen with providers of kind anthropic, openai (chat), openai
// (responses) and a translation target, all pointing at stubURL, and no
// client keys (loopback).
func AppendConfig(dst []byte, listen, stubURL string, lim ConfigLimits) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nproviders:\n", listen)
	provider := func(name, kind, api, base, models string) {
		fmt.Fprintf(&b, "  - name: %s\n    kind: %s\n", name, kind)
		if api != "" {
			fmt.Fprintf(&b, "    api: %s\n", api)
		}
		fmt.Fprintf(&b, "    base_url: %s\n    keys: [\"bench-upstream-key\"]\n    models: [%q]\n", base, models)
	}
	provider("anthropic", "anthropic", "", stubURL, "claude-*")
	provider("openai-chat", "openai", "chat", stubURL+"/v1", "gpt-*")
	provider("openai-responses", "openai", "responses", stubURL+"/v1", "codex-*")
	provider("xlate-chat", "openai", "chat", stubURL+"/v1", "xlate-chat-*")
	var lines []string
	if lim.MaxBodyBytes > 0 {
		lines = append(lines, "  max_body_bytes: "+strconv.FormatInt(lim.MaxBodyBytes, 10))
	}
	if lim.MaxConcurrent > 0 {
		lines = append(lines, "  max_concurrent: "+strconv.Itoa(lim.MaxConcurrent))
	}
	if lim.MaxBytesInFlight > 0 {
		lines = append(lines, "  max_bytes_in_flight: "+strconv.FormatInt(lim.MaxBytesInFlight, 10))
	}
	if len(lines) > 0 {
		b.WriteString("limits:\n" + strings.Join(lines, "\n") + "\n")
	}
	return append(dst, b.String()...)
}

// WriteConfig writes a generated config into dir and returns its path.
// It leaves the usage ledger to slipstream's default (on, in the state
// directory, which the harness points into its own directory:
// stateEnv), or turns it off with lim.NoLedger; binaries older than the
// ledger read the config either way without it.
func WriteConfig(dir, listen, stubURL string, lim ConfigLimits) (string, error) {
	path := filepath.Join(dir, "slipstream-bench.yaml")
	cfg := AppendConfig(nil, listen, stubURL, lim)
	if lim.NoLedger {
		cfg = append(cfg, "usage: {enabled: false}\n"...)
	}
	if lim.Guardrails {
		cfg = append(cfg, "guardrails: {enabled: true}\n"...)
	}
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		return "", fmt.Errorf("cannot write config: %w", err)
	}
	return path, nil
}

// stateEnv is the environment that keeps a slipstream's state (its usage
// ledger) under dir instead of the user's home directory.
func stateEnv(dir string) []string {
	return []string{"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "STATE_DIRECTORY="}
}
