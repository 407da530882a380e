package server

import (
	"bytes"
	"encoding/json"
	"log"
	"strings"
	"testing"
)

// TestJSONLines: each write is one JSON record whose level follows its
// prefix; a multi-line message stays one record; a JSON line (the access
// log's) passes through unchanged; a wrapped writer is not wrapped twice.
func TestJSONLines(t *testing.T) {
	var buf bytes.Buffer
	w := JSONLines(&buf)
	if JSONLines(w) != w {
		t.Fatal("JSONLines wrapped its own writer again")
	}
	l := log.New(w, "", 0)
	l.Printf("warning: /metrics is open")
	l.Printf("BUG: panic recovered: boom\ngoroutine 1 [running]:\n\tmain.go:1")
	l.Printf("config reloaded from %q", `a"b`)
	w.Write([]byte(`{"level":"INFO","id":"x"}` + "\n"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), buf.String())
	}
	want := []struct{ level, msg string }{
		{"WARN", "/metrics is open"},
		{"ERROR", "BUG: panic recovered: boom\ngoroutine 1 [running]:\n\tmain.go:1"},
		{"INFO", `config reloaded from "a\"b"`},
	}
	for i, w := range want {
		var m map[string]string
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil || m["level"] != w.level || m["msg"] != w.msg || m["time"] == "" {
			t.Errorf("line %d = %s (%v); want level %s msg %q", i, lines[i], err, w.level, w.msg)
		}
	}
	if lines[3] != `{"level":"INFO","id":"x"}` {
		t.Errorf("a JSON line was rewritten: %s", lines[3])
	}
}
