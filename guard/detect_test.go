package guard

import (
	"fmt"
	"strings"
	"testing"
)

func mustCompile(t testing.TB, c Config) *Set {
	t.Helper()
	s, err := Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDetectorsFind: every generated secret, embedded in its context inside
// a JSON string, is found by its rule with exactly the value as the span.
func TestDetectorsFind(t *testing.T) {
	s := mustCompile(t, allRules())
	m := AcquireMatches()
	defer ReleaseMatches(m)
	for seed := uint64(1); seed <= 200; seed++ {
		for _, sc := range newGen(seed).secrets() {
			text := fmt.Sprintf(sc.context, sc.value)
			body := []byte(`{"messages":[{"role":"user","content":"` + text + `"}]}`)
			s.ScanBody(body, m)
			found := false
			for k := 0; k < m.Len(); k++ {
				h := m.Hit(k)
				if h.Rule == sc.rule && string(body[h.Start:h.End]) == sc.value {
					found = true
				} else {
					t.Errorf("seed %d %s: extra match %s %q in %q", seed, sc.rule, h.Rule, body[h.Start:h.End], text)
				}
			}
			if !found {
				t.Fatalf("seed %d %s: %q not found in %q", seed, sc.rule, sc.value, text)
			}
		}
	}
}

// TestDetectorsReject: near misses and ordinary code are not matched.
func TestDetectorsReject(t *testing.T) {
	s := mustCompile(t, allRules())
	m := AcquireMatches()
	defer ReleaseMatches(m)
	f := func(text string) {
		t.Helper()
		s.ScanString([]byte(text), m)
		if m.Len() != 0 {
			h := m.Hit(0)
			t.Fatalf("%q: unexpected %s %q", text, h.Rule, text[h.Start:h.End])
		}
	}
	f("AKIAIOSFODNN7EXAMPL")               // 15 after prefix
	f("AKIAIOSFODNN7EXAMPLE1")             // 17: no word end
	f("xAKIAIOSFODNN7EXAMPLE")             // no word start
	f("AKIA0OSFODNN7EXAMPLE")              // 0 is not base32
	f("ghp_" + strings.Repeat("a", 35))    // short
	f("ghp_" + strings.Repeat("a", 37))    // long
	f("my_ghp_" + strings.Repeat("a", 36)) // no word start
	f("sk-" + strings.Repeat("a", 48))     // legacy without T3BlbkFJ
	f("sk-proj-" + strings.Repeat("a", 80))
	f("eyJhbGciOiJIUzI1NiJ9")                                          // one part
	f("eyJub3RoZWFkZXIiOjF9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl") // header without alg
	f("postgres://user@host/db")                                       // no password
	f("https://user:pass@example.com")                                 // not a database scheme
	f("-----BEGIN PUBLIC KEY-----\\nMIIB\\n-----END PUBLIC KEY-----")
	f("4111 1111 1111 1112")                       // Luhn fails
	f("1234567890123456")                          // no issuer
	f("1700000000000")                             // a timestamp
	f("000-12-3456")                               // area 000
	f("666-12-3456")                               // area 666
	f("123-00-4567")                               // group 00
	f("v1.123-45-6789")                            // glued to a version
	f("DE89370400440532013001")                    // mod 97 fails
	f("uuid 123e4567-e89b-12d3-a456-426614174000") // uuid
	f("sha 3f786850e387550fdab836ed7e6dc881de23001b")
	f("@property def x(self): pass")
	f("npm install @types/node")
	f("secret_access_key = EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPL")
	f("postgres://USER:PASSWORD@HOST:5432/DB")     // documentation
	f("postgres://app:$DB_PASSWORD@db:5432/app")   // a template
	f("mysql://root:****@localhost/x")             // masked
	f("\\u0041AKIAIOSFODNN7EXAMPLE")               // \u0041 is 'A': no word start
	f("xoxb-notatoken-atall-reallynotatokenatall") // no digit run
}

// TestEncodings: secrets as encoders write them: slashes escaped as \/,
// HTML characters as \u003c, escapes doubled inside tool arguments.
func TestEncodings(t *testing.T) {
	s := mustCompile(t, allRules())
	m := AcquireMatches()
	defer ReleaseMatches(m)
	f := func(text, rule, value string) {
		t.Helper()
		s.ScanString([]byte(text), m)
		for k := 0; k < m.Len(); k++ {
			if h := m.Hit(k); h.Rule == rule && text[h.Start:h.End] == value {
				return
			}
		}
		t.Fatalf("%s %q not found in %q", rule, value, text)
	}
	g := newGen(9)
	aws := "AKIA" + g.str(alB32, 16)
	sec := g.mixedB64(17) + `\/` + g.mixedB64(22)
	f(`\u003c`+aws+`\u003e`, "aws_access_key_id", aws)
	f(`\\n`+aws, "aws_access_key_id", aws)
	f(`aws_secret_access_key = `+sec, "aws_secret_access_key", sec)
	f(`{\\\"SecretAccessKey\\\": \\\"`+sec+`\\\"}`, "aws_secret_access_key", sec)
	f(`postgresql:\/\/app:s3cr3tPw@db\/x`, "database_url", "s3cr3tPw")
	f(`\\npostgresql://app:s3cr3tPw@db/x`, "database_url", "s3cr3tPw")
	hook := `hooks.slack.com\/services\/T01234567\/B01234567\/` + g.str(alAlnum, 24)
	f(`https:\/\/`+hook, "slack_webhook", hook)
	f(`Tel. 07909 870611`, "phone", "07909 870611")
	f(`xoxa-2-223434338770-1199583631658-6eea6a3bf5bf2f9ff2496e97b49f1561`, "slack_token", "xoxa-2-223434338770-1199583631658-6eea6a3bf5bf2f9ff2496e97b49f1561")
}

// TestBodyStructure: matches never come from member names or numbers, and a
// secret in a member's value is found wherever the value sits.
func TestBodyStructure(t *testing.T) {
	s := mustCompile(t, allRules())
	m := AcquireMatches()
	defer ReleaseMatches(m)
	key := "ghp_" + strings.Repeat("a1B2", 9)
	f := func(body string, want int) {
		t.Helper()
		s.ScanBody([]byte(body), m)
		if m.Len() != want {
			t.Fatalf("%s: %d matches, want %d", body, m.Len(), want)
		}
	}
	f(`{"`+key+`":1}`, 0)
	f(`{"a":"`+key+`"}`, 1)
	f(`{"a":["x",{"b":"\"`+key+`\""}]}`, 1)
	f(`{"n":4111111111111111}`, 0)
	f(`{"n":"4111111111111111"}`, 1)
	f(`{"a":"x\"","`+key+`" : "y"}`, 0)
	f(`{"a":"\n`+key+`\n"}`, 1)
}
