package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunCommands(t *testing.T) {
	f := func(args []string, stdin string, wantCode int, wantOut string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(stdin), &out, &errb)
		if code != wantCode || !strings.Contains(out.String()+errb.String(), wantOut) {
			t.Fatalf("%v: code %d, out %q, err %q", args, code, out.String(), errb.String())
		}
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"), 0o600)
	os.WriteFile(bad, []byte("providers:\n  - name: m\n    kind: mok\n    models: [x]\n"), 0o600)
	f([]string{"version"}, "", 0, "slipstream ")
	f([]string{"check", "-config", good}, "", 0, "ok")
	f([]string{"check", "-config", bad}, "", 1, "line 3: providers[0].kind: unknown kind \"mok\"")
	f([]string{"tokens"}, "hello world", 0, "2")
	f([]string{"tokens", "-ids", "-encoding", "cl100k_base"}, "hello world", 0, "15339\n1917\n")
	f([]string{"tokens", "-encoding", "nope"}, "", 2, "")
	f([]string{"tokens"}, "\t\n\t\nx", 0, "2")
}
