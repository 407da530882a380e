// Package e2e holds slipstream's end-to-end tests. They build
// ./cmd/slipstream, start it as a separate process on a loopback port, and
// drive it with real clients: the official OpenAI, Anthropic and Google
// Node SDKs (scripts in sdk/), Claude Code, Codex CLI, Gemini CLI,
// OpenCode, Qwen Code and pi, installed from the committed
// package-lock.json by install.sh (npm ci --prefix e2e).
//
// Upstreams are either slipstream's built-in mock provider or in-test
// stubs speaking a provider dialect that record what they receive. Nothing
// here reaches outside the machine. Node-based tests skip with a reason
// when node or e2e/node_modules is missing.
package e2e
