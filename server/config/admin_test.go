package config

import (
	"strings"
	"testing"
)

// TestAdminTokens: tokens are expanded from the environment, validated
// (named, unique, long, not a client key) and never printed.
func TestAdminTokens(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "OPS_TOKEN" {
			return "adm-secret-from-env-0123", true
		}
		return "", false
	}
	const prov = "providers: [{name: m, kind: mock, models: [\"*\"]}]\n"
	c, err := Parse([]byte(prov+"admin:\n  tokens:\n    - {name: ops, token: \"${OPS_TOKEN}\"}\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Admin.Tokens) != 1 || c.Admin.Tokens[0].Token != "adm-secret-from-env-0123" || c.Admin.Tokens[0].Name != "ops" {
		t.Fatalf("tokens %+v", c.Admin.Tokens)
	}
	out, err := c.MarshalRedacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "adm-secret") || !strings.Contains(string(out), "token: "+Redacted) {
		t.Fatalf("printed:\n%s", out)
	}

	f := func(yml, wantPath, wantMsg string) {
		t.Helper()
		_, err := Parse([]byte(prov+yml), env)
		if err == nil || !strings.Contains(err.Error(), wantPath) || !strings.Contains(err.Error(), wantMsg) {
			t.Fatalf("%q: got %v, want %s: %s", yml, err, wantPath, wantMsg)
		}
		if strings.Contains(err.Error(), "adm-") || strings.Contains(err.Error(), "sk-same") {
			t.Fatalf("the problem quotes a secret: %v", err)
		}
	}
	f("admin: {tokens: [{token: adm-0123456789abcdef}]}", "admin.tokens[0].name", "needs a name")
	f("admin: {tokens: [{name: a, token: adm-short}]}", "admin.tokens[0].token", "at least 16")
	f("admin: {tokens: [{name: a, token: adm-0123456789abcdef}, {name: a, token: adm-0123456789abcdeg}]}", "admin.tokens[1].name", "duplicate")
	f("admin: {tokens: [{name: a, token: adm-0123456789abcdef}, {name: b, token: adm-0123456789abcdef}]}", "admin.tokens[1].token", "listed twice")
	f("keys: [{name: dev, key: sk-same-0123456789abc}]\nadmin: {tokens: [{name: a, token: sk-same-0123456789abc}]}", "admin.tokens[0].token", "also client key")
}
