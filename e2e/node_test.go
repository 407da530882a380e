package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// requireE2E is set by CI (.ci/run): there, a real-client test that would
// skip for want of node, an npm package or a binary fails instead, so a
// broken install cannot pass as green.
const requireE2E = "SLIPSTREAM_REQUIRE_E2E"

// skipE2E skips the test with the reason, or fails it when
// SLIPSTREAM_REQUIRE_E2E=1.
func skipE2E(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireE2E) == "1" {
		t.Fatalf(requireE2E+"=1 and this real-client test cannot run: "+format, args...)
	}
	t.Skipf(format, args...)
}

// needNode skips the test unless node is on PATH and e2e/node_modules
// holds pkg (a package directory name such as "openai" or
// "@openai/codex").
func needNode(t *testing.T, pkg string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skipE2E(t, "node not found on PATH; install Node.js 20+ and run `npm ci --prefix e2e` (or e2e/install.sh) to run the real-client tests")
	}
	if _, err := os.Stat(filepath.Join(e2eDir(), "node_modules", pkg, "package.json")); err != nil {
		skipE2E(t, "e2e/node_modules/%s is missing; run `npm ci --prefix e2e` (or e2e/install.sh) to run the real-client tests", pkg)
	}
	return node
}

// runNode runs e2e/sdk/<script> with env added to the environment and
// decodes the JSON object it prints into out. A non-zero exit or
// unparseable output fails the test with stderr.
func runNode(t *testing.T, node, script string, env []string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(e2eDir(), "sdk", script))
	cmd.Dir = e2eDir()
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", script, err, clip(stdout.Bytes(), 4000), clip(stderr.Bytes(), 4000))
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), out); err != nil {
		t.Fatalf("node %s printed no JSON object: %v\nstdout:\n%s\nstderr:\n%s", script, err, clip(stdout.Bytes(), 4000), clip(stderr.Bytes(), 4000))
	}
	if stderr.Len() > 0 {
		t.Logf("node %s stderr:\n%s", script, clip(stderr.Bytes(), 2000))
	}
}
