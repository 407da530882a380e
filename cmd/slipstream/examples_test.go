package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/server/config"
	"slipstream/server/provider"
)

// TestExamples runs `slipstream check` on every configuration in
// examples/ (with the environment each one documents) and wants it valid
// and free of warnings; a few routing promises the examples make are
// checked too.
func TestExamples(t *testing.T) {
	// As on a box with GOMEMLIMIT set, so max_bytes_in_flight has its
	// derived default and no example warns about memory.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	dir := t.TempDir()
	cert, key := writeCert(t, dir, 1)
	for k, v := range map[string]string{
		"OPENAI_API_KEY": "sk-test-openai", "ANTHROPIC_API_KEY": "sk-test-anthropic",
		"ALICE_KEY": "k-alice-0001", "BOB_KEY": "k-bob-0002", "CI_KEY": "k-ci-0003",
		"SLIPSTREAM_TLS_CERT": cert, "SLIPSTREAM_TLS_KEY": key, "SLIPSTREAM_LISTEN": "",
	} {
		t.Setenv(k, v)
	}
	paths, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(paths) < 4 {
		t.Fatalf("examples: %v %v", paths, err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"check", "-config", p}, nil, &out, &errb); code != 0 || !strings.HasSuffix(out.String(), ": ok\n") {
				t.Fatalf("check: %d\n%s%s", code, out.String(), errb.String())
			}
			if strings.Contains(out.String(), "warning") {
				t.Fatalf("check warns:\n%s", out.String())
			}
			if !strings.Contains(string(readme), "examples/"+filepath.Base(p)) {
				t.Errorf("README does not mention examples/%s", filepath.Base(p))
			}
		})
	}
	route := func(file, model, wantProvider, wantModel string) {
		t.Helper()
		c, err := config.LoadFile("../../examples/"+file, config.Override{})
		if err != nil {
			t.Fatal(err)
		}
		tg, ok := provider.NewRegistry(c).Resolve(model, codec.DialectAnthropic)
		if !ok || tg.Provider.Name != wantProvider || (wantModel != "" && tg.Model != wantModel) {
			t.Fatalf("%s: %s routes to %+v, want %s/%s", file, model, tg, wantProvider, wantModel)
		}
	}
	route("claude-code-gpt.yaml", "claude-sonnet-4-5", "openai", "gpt-5")
	route("claude-code-gpt.yaml", "claude-haiku-4-5-20251001", "openai", "gpt-5-mini")
	route("claude-code-gpt.yaml", "claude-3-5-haiku-latest", "openai", "gpt-5-mini")
	route("local-openai-compatible.yaml", "claude-opus-4-1", "local", "qwen3-coder:30b")
	route("lan-three-keys.yaml", "claude-sonnet-4-5", "anthropic", "")
	route("lan-three-keys.yaml", "gpt-5-mini", "openai", "")
}

// TestREADMEConfigReference: the annotated configuration in the README's
// Configuration section is a valid file with every field spelled as the
// schema spells it (check reports unknown fields).
func TestREADMEConfigReference(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "```yaml\nlisten: 127.0.0.1:8317")
	if i < 0 {
		t.Fatal("README has no configuration reference block starting with listen:")
	}
	block := s[i+len("```yaml\n"):]
	block = block[:strings.Index(block, "\n```")]
	dir := t.TempDir()
	cert, key := writeCert(t, dir, 1)
	block = strings.ReplaceAll(block, "/etc/slipstream/tls/cert.pem", cert)
	block = strings.ReplaceAll(block, "/etc/slipstream/tls/key.pem", key)
	path := filepath.Join(dir, "reference.yaml")
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"SLIPSTREAM_KEY": "sk-ref-client-91ab", "ANTHROPIC_API_KEY": "sk-ref-ant-1", "ANTHROPIC_API_KEY_2": "sk-ref-ant-2", "CI_KEY_SHA256": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae", "OPENAI_API_KEY": "sk-ref-oai", "GEMINI_API_KEY": "sk-ref-gem", "SLIPSTREAM_LISTEN": ""} {
		t.Setenv(k, v)
	}
	t.Setenv("OPENAI_ORG", "org-secret-4d2f")
	var out, errb bytes.Buffer
	if code := run([]string{"check", "-config", path}, nil, &out, &errb); code != 0 {
		t.Fatalf("the README's configuration reference does not pass check:\n%s%s", out.String(), errb.String())
	}
	// Every secret it holds (keys, a header value) is redacted in -print.
	out.Reset()
	if code := run([]string{"check", "-config", path, "-print"}, nil, &out, &errb); code != 0 {
		t.Fatalf("check -print: %s", errb.String())
	}
	for _, secret := range []string{"sk-ref-", "org-secret-4d2f"} {
		if strings.Contains(out.String(), secret) {
			t.Fatalf("check -print shows %q:\n%s", secret, out.String())
		}
	}
}
