package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"slipstream/internal/testkit"
)

// TestReloadFileAndSIGHUP runs slipstream (this test binary) on a config
// file: an edit to the file is picked up without a restart, an invalid
// edit is refused with its line and the previous configuration keeps
// serving, and SIGHUP reloads without stopping the process.
func TestReloadFileAndSIGHUP(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	addr := testkit.FreeAddr(t)
	write := func(reply string) {
		t.Helper()
		yml := "providers:\n  - {name: m, kind: mock, models: [\"mock*\"], reply: " + reply + "}\n"
		// Write beside and rename, as editors do.
		tmp := filepath.Join(dir, ".s.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	ask := func() string {
		t.Helper()
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"mock","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	write("before")
	p := startMain(t, "-config", path, "-listen", addr)
	p.waitFor(t, "listening on ")
	if got := ask(); !strings.Contains(got, "before") {
		t.Fatalf("first answer %q", got)
	}

	write("after")
	p.waitFor(t, "config reloaded from "+path+" (changed)")
	if got := ask(); !strings.Contains(got, "after") {
		t.Fatalf("after the edit: %q", got)
	}

	if err := os.WriteFile(path, []byte("providers:\n  - {name: m, kind: nonsense, models: [\"mock*\"]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := p.waitFor(t, "rejected; the previous configuration keeps serving")
	if !strings.Contains(p.out.String(), "line 2: providers[0].kind") {
		t.Fatalf("the rejection does not name the line: %q\n%s", line, p.out.String())
	}
	if got := ask(); !strings.Contains(got, "after") {
		t.Fatalf("after an invalid edit: %q", got)
	}

	write("third")
	waitCount(t, p, "config reloaded from "+path+" (changed)", 2)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "config reloaded from "+path+" (SIGHUP)")
	if got := ask(); !strings.Contains(got, "third") {
		t.Fatalf("after SIGHUP: %q", got)
	}
	select {
	case <-p.done:
		t.Fatal("SIGHUP stopped the process")
	default:
	}
	p.stop(t)
}

// waitCount waits until s occurs n times in p's output.
func waitCount(t *testing.T, p *mainProc, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for strings.Count(p.out.String(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q not seen %d times:\n%s", s, n, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
