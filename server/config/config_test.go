package config

import (
	"errors"
	"strings"
	"testing"

	"slipstream/internal/testkit"
)

func TestExpand(t *testing.T) {
	f := func(in, want string, wantErr bool) {
		t.Helper()
		got, err := Expand(in, testkit.Env("A", "alpha", "EMPTY", ""))
		if (err != nil) != wantErr || got != want {
			t.Fatalf("Expand(%q) = %q, %v", in, got, err)
		}
	}
	f("plain", "plain", false)
	f("${A}", "alpha", false)
	f("x-${A}-y", "x-alpha-y", false)
	f("${B:-dflt}", "dflt", false)
	f("${EMPTY:-dflt}", "dflt", false)
	f("${EMPTY}", "", false)
	f("${B}", "", true)
	f("${A", "", true)
}

const full = `listen: 127.0.0.1:9000
keys:
  - name: laptop
    key: ${SLIPSTREAM_KEY}
    models: ["*"]
providers:
  - name: anthropic
    kind: anthropic
    base_url: https://api.anthropic.com
    keys: ["${ANTHROPIC_API_KEY}"]
    models: ["claude-*"]
  - name: openai
    kind: openai
    api: responses
    base_url: https://api.openai.com/v1
    keys: ["${OPENAI_API_KEY}"]
    models: ["gpt-*", "o*"]
  - name: mock
    kind: mock
    models: ["mock*"]
aliases:
  fast: openai/gpt-5-mini
limits:
  max_body_bytes: 67108864
  max_concurrent: 4096
timeouts:
  connect: 10s
  first_byte: 10m
  idle: 5m
  keepalive: 15s
`

func TestParseIssueSchema(t *testing.T) {
	c, err := Parse([]byte(full), testkit.Env("SLIPSTREAM_KEY", "sk-1", "ANTHROPIC_API_KEY", "a", "OPENAI_API_KEY", "o"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Keys[0].Key != "sk-1" || c.Providers[1].API != "responses" || c.Aliases["fast"] != "openai/gpt-5-mini" {
		t.Fatalf("decoded %+v", c)
	}
	if c.Timeouts.FirstByte.D().Minutes() != 10 || c.Timeouts.KeepaliveInterval().Seconds() != 15 {
		t.Fatalf("timeouts %+v", c.Timeouts)
	}
	if c.Providers[2].Reply != DefaultMockReply {
		t.Fatalf("mock reply default not applied")
	}
}

func TestParseProblemsCarryPathAndLine(t *testing.T) {
	f := func(yml string, wantLines ...string) {
		t.Helper()
		_, err := Parse([]byte(yml), testkit.Env("K", "v"))
		var ps Problems
		if !errors.As(err, &ps) {
			t.Fatalf("want Problems, got %v", err)
		}
		got := ps.Error()
		for _, w := range wantLines {
			if !strings.Contains(got, w) {
				t.Fatalf("problems\n%s\nlack %q", got, w)
			}
		}
	}
	f("providers:\n  - name: a\n    kind: anthropc\n    models: [x]\n",
		"line 3: providers[0].kind: unknown kind \"anthropc\"")
	f("listen: 0.0.0.0:80\nproviders:\n  - name: m\n    kind: mock\n    models: [\"*\"]\n",
		"keys: no client keys")
	f("providers:\n  - name: a\n    kind: anthropic\n    keys: [\"${NOPE}\"]\n    models: [x]\n",
		"line 4: providers[0].keys[0]: environment variable NOPE is not set")
	f("limits:\n  max_concurent: 3\nproviders:\n  - {name: m, kind: mock, models: [x]}\n",
		"line 2: limits.max_concurent: unknown field")
	f("providers:\n  - {name: m, kind: mock, models: [x]}\n  - {name: m, kind: openai, api: chatty, keys: [k], models: [y]}\naliases:\n  fast: nobody/x\n",
		"providers[1].name: duplicate provider name", "providers[1].api: unknown api", "aliases.fast: no provider named")
}

func TestDefault(t *testing.T) {
	c := Default(testkit.Env())
	if len(c.Providers) != 1 || c.Providers[0].Kind != KindMock || c.Providers[0].Models[0] != "*" {
		t.Fatalf("no keys: %+v", c.Providers)
	}
	c = Default(testkit.Env("ANTHROPIC_API_KEY", "a", "GEMINI_API_KEY", "g"))
	if len(c.Providers) != 3 || c.Providers[2].Models[0] != "mock*" || c.Providers[0].BaseURL != "https://api.anthropic.com" {
		t.Fatalf("with keys: %+v", c.Providers)
	}
	if ps := c.Validate(); len(ps) != 0 {
		t.Fatalf("default config invalid: %v", ps)
	}
}
