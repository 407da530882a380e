package config

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"slipstream/guard/guardtest"
	"slipstream/internal/testkit"
)

const guardBase = `keys:
  - {name: laptop, key: sk-client-laptop}
  - {name: ci, key: sk-client-ci}
providers:
  - {name: anthropic, kind: anthropic, keys: [sk-up-a], models: ["claude-*"]}
  - {name: local, kind: openai, base_url: "http://127.0.0.1:11434/v1", models: ["llama*"]}
`

// testHashKey is a generated key, as an operator's ${ENV} would hold.
func testHashKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestGuardrails: the documented example parses, expands ${ENV}, and the
// precedence picks the action the docs say.
func TestGuardrails(t *testing.T) {
	key := testHashKey(t)
	list := filepath.Join(t.TempDir(), "names.txt")
	if err := os.WriteFile(list, []byte("# customers\nAcme Holdings\n\n  Globex Corporation  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yml := guardBase + `guardrails:
  hash_key: ${GUARD_KEY}
  rules:
    "*": redact
    email: {action: redact, restore: true}
    phone: off
    private_key: block
  custom:
    - {name: ticket_id, regex: 'ACME-[0-9]{6}', keywords: [ACME-], action: log}
  lists:
    - {name: customers, values: [Initech LLC], file: ` + list + `}
  policies:
    - providers: [local]
      rules: {"*": off}
    - keys: [ci]
      rules: {jwt: block, customers: off}
`
	c, err := Parse([]byte(yml), testkit.Env("GUARD_KEY", key))
	if err != nil {
		t.Fatal(err)
	}
	g := &c.Guardrails
	if !g.On() {
		t.Fatal("a configured section is off")
	}
	kb, err := g.HashKeyBytes()
	if err != nil || hex.EncodeToString(kb) != key {
		t.Fatalf("hash key %x, %v", kb, err)
	}
	vals, err := g.Lists[0].Load()
	if err != nil || !slices.Equal(vals, []string{"Initech LLC", "Acme Holdings", "Globex Corporation"}) {
		t.Fatalf("list values %q, %v", vals, err)
	}

	f := func(keyName, provider, rule string, want GuardRule, wantOK bool) {
		t.Helper()
		got, ok := g.Action(g.Policy(keyName, provider), rule)
		if got != want || ok != wantOK {
			t.Fatalf("%s via %s, rule %s: %+v %v, want %+v %v", keyName, provider, rule, got, ok, want, wantOK)
		}
	}
	redact, off := GuardRule{Action: GuardRedact}, GuardRule{Action: GuardOff}
	// No policy matches laptop -> anthropic: top-level rules.
	f("laptop", "anthropic", "email", GuardRule{Action: GuardRedact, Restore: true}, true)
	f("laptop", "anthropic", "phone", off, true)
	f("laptop", "anthropic", "private_key", GuardRule{Action: GuardBlock}, true)
	f("laptop", "anthropic", "aws_access_key_id", redact, true) // from "*"
	f("laptop", "anthropic", "ticket_id", GuardRule{Action: GuardLog}, true)
	f("laptop", "anthropic", "customers", redact, true)
	f("laptop", "anthropic", "no_such_rule", GuardRule{}, false)
	// Anything sent to the local model: every rule off, the first policy wins
	// over the second even for ci.
	for _, k := range []string{"laptop", "ci", ""} {
		for _, r := range []string{"email", "private_key", "ticket_id", "customers", "jwt"} {
			f(k, "local", r, off, true)
		}
	}
	// ci to anthropic: named rules of its policy, the rest as top level.
	f("ci", "anthropic", "jwt", GuardRule{Action: GuardBlock}, true)
	f("ci", "anthropic", "customers", off, true)
	f("ci", "anthropic", "email", GuardRule{Action: GuardRedact, Restore: true}, true)

	// Without "*" an unnamed detector keeps its default.
	c, err = Parse([]byte(guardBase+"guardrails: {rules: {email: log}}\n"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := c.Guardrails.Action(-1, "github_token"); ok {
		t.Fatalf("github_token: %+v, want the default", r)
	}
	if r, _ := c.Guardrails.Action(-1, "email"); r.Action != GuardLog {
		t.Fatalf("email: %+v", r)
	}
}

func TestGuardrailsOn(t *testing.T) {
	f := func(yml string, want bool) {
		t.Helper()
		c, err := Parse([]byte(guardBase+yml), testkit.Env())
		if err != nil {
			t.Fatal(err)
		}
		if c.Guardrails.On() != want {
			t.Fatalf("%q: on %v, want %v", yml, !want, want)
		}
	}
	f("", false)
	f("guardrails: {}\n", false)
	f("guardrails: {enabled: true}\n", true)
	f("guardrails: {rules: {email: log}}\n", true)
	f("guardrails: {enabled: false, rules: {email: log}}\n", false)
}

// TestGuardrailsProblems: each mistake is reported at its path, saying
// what to fix, and no problem quotes the hash key or a list value.
func TestGuardrailsProblems(t *testing.T) {
	const secretish = "hunter2-literal-value"
	f := func(yml, wantPath, wantMsg string) {
		t.Helper()
		_, err := Parse([]byte(guardBase+"guardrails:\n"+yml), testkit.Env())
		if err == nil || !strings.Contains(err.Error(), wantPath+": ") || !strings.Contains(err.Error(), wantMsg) {
			t.Fatalf("%q: got %v, want %s: %s", yml, err, wantPath, wantMsg)
		}
		if testing.Verbose() {
			t.Log(err)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "0123456789abcdef") {
			t.Fatalf("the problem quotes a secret: %v", err)
		}
	}
	f("  hash_key: 0123456789abcdef\n", "guardrails.hash_key", "too short: want at least 16")
	f("  hash_key: 0123456789abcdefXYZ\n", "guardrails.hash_key", "not hex")
	f("  rules: {emial: redact}\n", "guardrails.rules.emial", "unknown rule \"emial\"")
	f("  rules: {emial: redact}\n", "guardrails.rules.emial", "did you mean email?")
	f("  rules: {email: scrub}\n", "guardrails.rules.email", "unknown action \"scrub\" (want redact, block, log or off)")
	f("  rules: {email: {action: block, restore: true}}\n", "guardrails.rules.email.restore", "redact only")
	f("  rules: {email: {action: redact, colour: red}}\n", "guardrails.rules.email.colour", "unknown field")
	f("  rules: {email: [redact]}\n", "guardrails.rules.email", "want a string or a mapping {action, restore}")
	f("  custom: [{regex: 'x+'}]\n", "guardrails.custom[0].name", "missing name")
	f("  custom: [{name: Bad-Name, regex: 'x+'}]\n", "guardrails.custom[0].name", "lower-case letters")
	f("  custom: [{name: email, regex: 'x+'}]\n", "guardrails.custom[0].name", "is a built-in detector")
	f("  custom: [{name: t}]\n", "guardrails.custom[0].regex", "missing regex for rule \"t\"")
	f("  custom: [{name: t, regex: 'ACME-(\\d+'}]\n", "guardrails.custom[0].regex", "rule \"t\": cannot compile the regex: missing closing )")
	f("  custom: [{name: t, regex: '(?=x)'}]\n", "guardrails.custom[0].regex", "rule \"t\": cannot compile")
	f("  custom: [{name: t, regex: 'x*'}]\n", "guardrails.custom[0].regex", "matches the empty string")
	f("  custom: [{name: t, regex: 'x+', keywords: ['']}]\n", "guardrails.custom[0].keywords[0]", "empty keyword")
	f("  custom: [{name: t, regex: 'x+', action: nuke}]\n", "guardrails.custom[0].action", "unknown action")
	f("  custom: [{name: t, regex: 'x+'}, {name: t, regex: 'y+'}]\n", "guardrails.custom[1].name", "duplicate rule name \"t\" (also guardrails.custom[0])")
	f("  custom: [{name: t, regex: 'x+'}]\n  lists: [{name: t, values: [abcdef]}]\n", "guardrails.lists[0].name", "duplicate rule name")
	f("  lists: [{name: l}]\n", "guardrails.lists[0]", "neither values nor file")
	f("  lists: [{name: l, values: [abc]}]\n", "guardrails.lists[0].values[0]", "shorter than 4 characters")
	f("  lists: [{name: l, file: /nonexistent/names.txt}]\n", "guardrails.lists[0].file", "cannot read the list file")
	f("  lists: [{name: l, values: "+secretish+"}]\n", "guardrails.lists[0].values", "want a list")
	f("  lists: [{name: l, values: ["+secretish+"], restore: true, action: log}]\n", "guardrails.lists[0].restore", "redact only")
	f("  policies: [{rules: {\"*\": off}}]\n", "guardrails.policies[0]", "needs keys or providers")
	f("  policies: [{keys: [nobody], rules: {\"*\": off}}]\n", "guardrails.policies[0].keys[0]", "no client key named \"nobody\"")
	f("  policies: [{providers: [openai], rules: {\"*\": off}}]\n", "guardrails.policies[0].providers[0]", "no provider named \"openai\"")
	f("  policies: [{providers: [local]}]\n", "guardrails.policies[0].rules", "empty: name the rules")
	f("  policies: [{providers: [local], rules: {tickets: off}}]\n", "guardrails.policies[0].rules.tickets", "a built-in detector, a custom rule or a list")
	f("  policies: [{providers: [local], rules: {email: maybe}}]\n", "guardrails.policies[0].rules.email", "unknown action")
	f("  enabled: yes please\n", "guardrails.enabled", "want true or false")
}

// TestGuardrailsPrint: check -print hides the hash key and list values.
func TestGuardrailsPrint(t *testing.T) {
	key := testHashKey(t)
	c, err := Parse([]byte(guardBase+"guardrails:\n  hash_key: "+key+"\n  lists: [{name: l, values: [hunter2-literal-value]}]\n  rules: {email: {action: redact, restore: true}}\n"), testkit.Env())
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.MarshalRedacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, key) || strings.Contains(s, "hunter2") || !strings.Contains(s, "hash_key: "+Redacted) || !strings.Contains(s, "restore: true") {
		t.Fatalf("printed:\n%s", s)
	}
}

// TestGuardrailDetectorsMatchCorpus: the names config accepts are the
// names the corpus generates (and package guard reports).
func TestGuardrailDetectorsMatchCorpus(t *testing.T) {
	if !slices.Equal(GuardrailDetectors, guardtest.Rules) {
		t.Fatalf("config %v\ncorpus %v", GuardrailDetectors, guardtest.Rules)
	}
}
