package guard

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

var phRE = regexp.MustCompile(`\[REDACTED:[a-z0-9_]+:[0-9a-f]{6}\]`)

// TestAppendRedacted: every secret of a generated body is replaced, the
// result is valid JSON, the same secret gets the same placeholder and two
// secrets get two.
func TestAppendRedacted(t *testing.T) {
	s := mustCompile(t, allRules())
	m := AcquireMatches()
	defer ReleaseMatches(m)
	g := newGen(3)
	secs := g.secrets()
	var parts []string
	for _, sec := range secs {
		parts = append(parts, `{"type":"text","text":"`+strings.ReplaceAll(sec.context, "%s", sec.value)+`"}`)
	}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`)
	if !json.Valid(body) {
		t.Fatalf("test body is not JSON: %s", body)
	}
	s.ScanBody(body, m)
	if m.Redacts() != len(secs) {
		t.Fatalf("%d redactions, want %d", m.Redacts(), len(secs))
	}
	out := m.AppendRedacted(nil, body, nil, "")
	if !json.Valid(out) {
		t.Fatalf("redacted body is not JSON: %s", out)
	}
	for _, sec := range secs {
		if bytes.Contains(out, []byte(sec.value)) {
			t.Fatalf("%s survived", sec.rule)
		}
	}
	if n := len(phRE.FindAll(out, -1)); n != len(secs) {
		t.Fatalf("%d placeholders, want %d", n, len(secs))
	}
	again := m.AppendRedacted(nil, body, nil, "")
	if !bytes.Equal(out, again) {
		t.Fatal("placeholders are not deterministic")
	}
	a := s.AppendPlaceholder(nil, "github_token", []byte("ghp_1"))
	b := s.AppendPlaceholder(nil, "github_token", []byte("ghp_2"))
	if bytes.Equal(a, b) {
		t.Fatal("two secrets, one placeholder")
	}
	other := mustCompile(t, Config{Key: []byte("another key")})
	if bytes.Equal(a, other.AppendPlaceholder(nil, "github_token", []byte("ghp_1"))) {
		t.Fatal("placeholder does not depend on the key")
	}
	// An escaped and a plain spelling of one value share a placeholder.
	if !bytes.Equal(s.AppendPlaceholder(nil, "r", []byte(`a\/b`)), s.AppendPlaceholder(nil, "r", []byte(`a/b`))) {
		t.Fatal("placeholder depends on escaping")
	}
}

// TestActions: block reports the first blocking rule, log counts without
// rewriting, and a body without redactions is returned as is.
func TestActions(t *testing.T) {
	s := mustCompile(t, Config{Rules: []Rule{{Name: "github_token", Action: Block}, {Name: "npm_token", Action: Log}}})
	m := AcquireMatches()
	defer ReleaseMatches(m)
	gh := "ghp_" + strings.Repeat("Ab3", 12)
	npm := "npm_" + strings.Repeat("Zz9", 12)
	body := []byte(`{"a":"` + npm + ` ` + gh + `"}`)
	s.ScanBody(body, m)
	if r, ok := m.Blocked(); !ok || r != "github_token" {
		t.Fatalf("Blocked() = %q %v", r, ok)
	}
	if m.Redacts() != 0 || m.Len() != 2 {
		t.Fatalf("redacts %d len %d", m.Redacts(), m.Len())
	}
	if got := string(m.AppendRules(nil)); got != "npm_token,github_token" {
		t.Fatalf("AppendRules = %q", got)
	}
	if got := m.AppendRedacted(nil, body, nil, ""); !bytes.Equal(got, body) {
		t.Fatalf("log and block rewrote the body: %s", got)
	}
}

// TestPatternsAndLiterals: operator rules find their matches inside string
// values only, behind their keyword prefilter.
func TestPatternsAndLiterals(t *testing.T) {
	s := mustCompile(t, Config{
		OnlyRules: true,
		Patterns:  []Pattern{{Name: "employee_id", Regexp: `EMP-[0-9]{6}`, Keywords: []string{"EMP-"}}},
		Literals:  []Literal{{Name: "codename", Values: []string{"Project \"Falcon\""}, Action: Block}},
	})
	m := AcquireMatches()
	defer ReleaseMatches(m)
	body := []byte(`{"EMP-000001":"id EMP-123456 of Project \"Falcon\"","n":"EMP-12"}`)
	s.ScanBody(body, m)
	if m.Len() != 2 {
		t.Fatalf("%d matches", m.Len())
	}
	if h := m.Hit(0); h.Rule != "employee_id" || string(body[h.Start:h.End]) != "EMP-123456" {
		t.Fatalf("hit 0: %+v", h)
	}
	if r, ok := m.Blocked(); !ok || r != "codename" {
		t.Fatalf("Blocked() = %q", r)
	}
	out := m.AppendRedacted(nil, body, nil, "")
	if !json.Valid(out) || bytes.Contains(out, []byte("123456")) {
		t.Fatalf("out %s", out)
	}
}

// TestCompileErrors: bad configs are refused naming the rule, never a value.
func TestCompileErrors(t *testing.T) {
	f := func(c Config, want string) {
		t.Helper()
		_, err := Compile(c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		for _, l := range c.Literals {
			for _, v := range l.Values {
				if v != "" && strings.Contains(err.Error(), v) {
					t.Fatalf("error quotes a value: %v", err)
				}
			}
		}
	}
	f(Config{Rules: []Rule{{Name: "nope"}}}, `unknown detector "nope"`)
	f(Config{Rules: []Rule{{Name: "jwt", Action: Block, Restore: true}}}, `rule "jwt": restore needs action redact`)
	f(Config{Patterns: []Pattern{{Name: "x", Regexp: "("}}}, `rule "x"`)
	f(Config{Patterns: []Pattern{{Name: "Bad Name", Regexp: "x"}}}, `rule name "Bad Name"`)
	f(Config{Literals: []Literal{{Name: "jwt", Values: []string{"s3cr3t"}}}}, `the name of a built-in`)
	f(Config{Literals: []Literal{{Name: "a", Values: []string{"s3cr3t"}}, {Name: "a", Values: []string{"t0p"}}}}, `defined twice`)
	f(Config{Literals: []Literal{{Name: "a", Values: []string{"s3cr3t", ""}}}}, `value 1 is empty`)
}

// TestDefaults: the zero Config enables the credential detectors only.
func TestDefaults(t *testing.T) {
	s := mustCompile(t, Config{})
	got := strings.Join(s.Rules(), " ")
	for _, n := range Detectors() {
		if strings.Contains(got, n) != DefaultOn(n) {
			t.Fatalf("%s: enabled %v, DefaultOn %v", n, strings.Contains(got, n), DefaultOn(n))
		}
	}
	if DefaultOn("email") || !DefaultOn("jwt") {
		t.Fatal("defaults changed")
	}
}
