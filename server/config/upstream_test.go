package config

import (
	"errors"
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

func TestUpstreamFieldDefaults(t *testing.T) {
	c, err := Parse([]byte("limits: {max_concurrent: 100}\nproviders:\n  - {name: m, kind: mock, models: [x]}\n"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.UpstreamConns != 100 {
		t.Fatalf("upstream_conns default %d, want max_concurrent", c.Limits.UpstreamConns)
	}
	if d := c.Timeouts.UpstreamIdleConn.D(); d <= 0 || d >= 5e9 {
		t.Fatalf("upstream_idle_conn default %v, want well under 5s", d)
	}
}

func TestUpstreamFieldChecks(t *testing.T) {
	ok := func(yml string) {
		t.Helper()
		if _, err := Parse([]byte(yml), testkit.Env()); err != nil {
			t.Fatalf("%s: %v", yml, err)
		}
	}
	bad := func(yml, want string) {
		t.Helper()
		_, err := Parse([]byte(yml), testkit.Env())
		var ps Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), want) {
			t.Fatalf("%s: want a problem %q, got %v", yml, want, err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("a problem quotes a secret: %v", err)
		}
	}
	// A local OpenAI-compatible server needs no key; the public endpoints do.
	ok("providers:\n  - {name: ollama, kind: openai, base_url: \"http://127.0.0.1:11434/v1\", models: [\"*\"]}\n")
	bad("providers:\n  - {name: o, kind: openai, models: [\"*\"]}\n", "providers[0].keys: a openai provider needs at least one key")
	bad("providers:\n  - {name: a, kind: anthropic, base_url: \"http://127.0.0.1:1\", models: [\"*\"]}\n", "providers[0].keys")

	ok("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], headers: {OpenAI-Organization: org-1, X-Gateway-Auth: s3cret}}\n")
	bad("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], headers: {\"Bad Name\": s3cret}}\n", "providers[0].headers.Bad Name: not a valid header name")
	bad("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], headers: {X-A: \"s3cret\\r\\nX-B: 1\"}}\n", "must not contain CR, LF")
	bad("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], headers: {Host: evil}}\n", "Host is set by slipstream")

	ok("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], proxy: direct}\n")
	ok("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], proxy: \"http://u:s3cret@proxy:3128\"}\n")
	ok("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], proxy: \"socks5://127.0.0.1:1080\"}\n")
	bad("providers:\n  - {name: o, kind: openai, keys: [k], models: [\"*\"], proxy: \"ftp://u:s3cret@proxy\"}\n", "providers[0].proxy: want")

	bad("timeouts: {upstream_idle_conn: -1s}\nproviders:\n  - {name: m, kind: mock, models: [x]}\n", "timeouts.upstream_idle_conn")
	bad("limits: {upstream_conns: -1}\nproviders:\n  - {name: m, kind: mock, models: [x]}\n", "limits")
}
