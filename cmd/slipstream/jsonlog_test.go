package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

// TestJSONLogEveryLine: with log.format json, every line slipstream writes
// is one JSON object: the start-up summary, access lines, an upstream
// error, a reload and the shutdown, not only the access lines.
func TestJSONLogEveryLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	addr := testkit.FreeAddr(t)
	refused := testkit.FreeAddr(t) // nothing listens there
	yml := func(reply string) string {
		return "log: {access: true, format: json}\nproviders:\n" +
			"  - {name: m, kind: mock, models: [\"mock*\"], reply: " + reply + "}\n" +
			"  - {name: gone, kind: openai, base_url: \"http://" + refused + "/v1\", keys: [sk-test-not-real], models: [\"gone*\"]}\n"
	}
	if err := os.WriteFile(path, []byte(yml("before")), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startMain(t, "-config", path, "-listen", addr)
	p.waitFor(t, "listening on ")
	for _, model := range []string{"mock", "gone-1"} {
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	p.waitFor(t, "upstream error: provider=gone")
	os.WriteFile(path, []byte(yml("after")), 0o600)
	p.waitFor(t, "config reloaded from ")
	p.stop(t)

	levels := map[string]bool{}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(p.out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a line that is not JSON: %q\n%s", line, p.out.String())
		}
		if m["time"] == nil || m["level"] == nil {
			t.Fatalf("a line without time and level: %q", line)
		}
		levels[m["level"].(string)] = true
		n++
	}
	if n < 10 || !levels["INFO"] || !levels["ERROR"] {
		t.Fatalf("%d lines, levels %v: want the summary, access lines and an upstream error\n%s", n, levels, p.out.String())
	}
	for _, want := range []string{`"msg":"listen `, `"msg":"slipstream dev listening on http://`, `"upstream_model":"gone-1"`, `"msg":"stopped"`} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, p.out.String())
		}
	}
}
