package guard

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// oneShot is the reference for Scanner: ScanString over the whole input,
// every non-Log match replaced.
func oneShot(s *Set, in []byte) []byte {
	m := AcquireMatches()
	defer ReleaseMatches(m)
	s.ScanString(in, m)
	var out []byte
	last := 0
	for k := 0; k < m.Len(); k++ {
		h := m.Hit(k)
		if h.Action == Log {
			continue
		}
		out = append(out, in[last:h.Start]...)
		out = s.AppendPlaceholder(out, h.Rule, in[h.Start:h.End])
		last = h.End
	}
	return append(out, in[last:]...)
}

// streamed feeds in cut at the given offsets.
func streamed(sc *Scanner, in []byte, cuts ...int) []byte {
	var out []byte
	last := 0
	for _, c := range cuts {
		out = sc.Feed(out, in[last:c])
		last = c
	}
	out = sc.Feed(out, in[last:])
	return sc.Flush(out)
}

// TestStreamEqualsOneShot: for every generated secret and every cut offset
// between two deltas (and a random three-way split), the streamed output
// equals the one-shot redaction, and the secret is gone.
func TestStreamEqualsOneShot(t *testing.T) {
	for _, s := range []*Set{mustCompile(t, allRules()), mustCompile(t, Config{})} {
		streamEqualsOneShot(t, s)
	}
}

func streamEqualsOneShot(t *testing.T, s *Set) {
	sc := s.AcquireScanner()
	defer ReleaseScanner(sc)
	for seed := uint64(1); seed <= 20; seed++ {
		g := newGen(seed)
		for _, sec := range g.secrets() {
			in := []byte("Here it is: " + fmt.Sprintf(sec.context, sec.value) + " done.")
			want := oneShot(s, in)
			if DefaultOn(sec.rule) && bytes.Contains(want, []byte(sec.value)) || len(s.rules) == int(numDetectors) && bytes.Contains(want, []byte(sec.value)) {
				t.Fatalf("%s: one-shot kept the value: %s", sec.rule, want)
			}
			for c := 0; c <= len(in); c++ {
				got := streamed(sc, in, c)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s cut %d:\n got %s\nwant %s", sec.rule, c, got, want)
				}
			}
			c1 := g.r.IntN(len(in) + 1)
			c2 := c1 + g.r.IntN(len(in)-c1+1)
			if got := streamed(sc, in, c1, c2); !bytes.Equal(got, want) {
				t.Fatalf("%s cuts %d %d:\n got %s\nwant %s", sec.rule, c1, c2, got, want)
			}
		}
	}
}

// TestStreamByteByByte: one byte per delta over a long mixed text.
func TestStreamByteByByte(t *testing.T) {
	for _, s := range []*Set{mustCompile(t, allRules()), mustCompile(t, Config{})} {
		streamByteByByte(t, s)
	}
}

func streamByteByByte(t *testing.T, s *Set) {
	sc := s.AcquireScanner()
	defer ReleaseScanner(sc)
	var sb strings.Builder
	for _, sec := range newGen(7).secrets() {
		sb.WriteString(fmt.Sprintf(sec.context, sec.value))
		sb.WriteString(" and then\\n")
	}
	in := []byte(sb.String())
	want := oneShot(s, in)
	var got []byte
	for k := range in {
		got = sc.Feed(got, in[k:k+1])
	}
	got = sc.Flush(got)
	if !bytes.Equal(got, want) {
		t.Fatalf("byte by byte:\n got %s\nwant %s", got, want)
	}
	if sc.Found() == 0 {
		t.Fatal("nothing found")
	}
}

// TestStreamHoldBack: text that cannot be part of a match is emitted in the
// Feed that brings it, up to the last break; a possible prefix is held.
func TestStreamHoldBack(t *testing.T) {
	s := mustCompile(t, Config{})
	sc := s.AcquireScanner()
	defer ReleaseScanner(sc)
	f := func(delta, want string) {
		t.Helper()
		if got := string(sc.Feed(nil, []byte(delta))); got != want {
			t.Fatalf("Feed(%q) = %q, want %q", delta, got, want)
		}
	}
	f("Hello world, here is ", "Hello world, here is ")
	f("a partial wor", "a partial wor") // cannot begin a match: not held
	f("d, the key gh", "d, the key ")   // may begin ghp_: held
	f("p_abc ", "ghp_abc ")
	f("-----BEGIN RSA PRIVATE KEY-----\\nMIIE", "")
	if got := string(sc.Feed(nil, []byte("\\n-----END RSA PRIVATE KEY----- ok"))); !strings.HasPrefix(got, "[REDACTED:private_key:") || !strings.HasSuffix(got, "] ok") {
		t.Fatalf("footer: %q", got)
	}
	f("see postgres://app:pa", "see ")
	if got := string(sc.Feed(nil, []byte("Xw9z@db/x done"))); !strings.HasPrefix(got, "postgres://app:[REDACTED:database_url:") || !strings.HasSuffix(got, "]@db/x done") {
		t.Fatalf("database URL: %q", got)
	}
	if got := string(sc.Flush(nil)); got != "" {
		t.Fatalf("flush = %q", got)
	}
}

// TestStreamLiterals: operator literals are found across deltas too.
func TestStreamLiterals(t *testing.T) {
	s := mustCompile(t, Config{Literals: []Literal{{Name: "codename", Values: []string{"Project Falcon", "falcon-db-prod"}}}})
	sc := s.AcquireScanner()
	defer ReleaseScanner(sc)
	in := []byte("We deploy Project Falcon to falcon-db-prod tonight; Project Fal is not it.")
	want := oneShot(s, in)
	if bytes.Contains(want, []byte("Falcon")) || !bytes.Contains(want, []byte("Project Fal is")) {
		t.Fatalf("one-shot: %s", want)
	}
	for c := 0; c <= len(in); c++ {
		if got := streamed(sc, in, c); !bytes.Equal(got, want) {
			t.Fatalf("cut %d:\n got %s\nwant %s", c, got, want)
		}
	}
}
