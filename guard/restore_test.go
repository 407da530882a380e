package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestRestoreRoundTrip: a restoring rule's placeholders come back as the
// original value in a response for the same scope, at every cut offset,
// JSON-escaped at the requested level; other scopes and invented
// placeholders are left alone.
func TestRestoreRoundTrip(t *testing.T) {
	s := mustCompile(t, Config{Rules: []Rule{{Name: "private_key", Restore: true}, {Name: "github_token", Restore: true}}})
	v := NewVault(VaultConfig{})
	m := AcquireMatches()
	defer ReleaseMatches(m)
	g := newGen(11)
	var pemSec, ghSec secret
	for _, sec := range g.secrets() {
		switch sec.rule {
		case "private_key":
			pemSec = sec
		case "github_token":
			ghSec = sec
		}
	}
	body := []byte(`{"content":"` + fmt.Sprintf(pemSec.context, pemSec.value) + ` and ` + ghSec.value + `"}`)
	s.ScanBody(body, m)
	red := m.AppendRedacted(nil, body, v, "team-a")
	phs := phRE.FindAll(red, -1)
	if len(phs) != 2 {
		t.Fatalf("placeholders: %q", phs)
	}
	answer := []byte("Written: " + string(phs[0]) + " and " + string(phs[1]) + " but not [REDACTED:github_token:000000].")
	var want []byte
	want = append(want, "Written: "...)
	want = append(want, pemSec.value...) // raw content: escapes as in the request
	want = append(want, " and "+ghSec.value+" but not [REDACTED:github_token:000000]."...)

	r := AcquireRestorer(v, "team-a", 1)
	defer ReleaseRestorer(r)
	for c := 0; c <= len(answer); c++ {
		r.Reset()
		r.v, r.scope, r.levels = v, "team-a", 1
		got := r.Feed(nil, answer[:c])
		got = r.Feed(got, answer[c:])
		got = r.Flush(got)
		if !bytes.Equal(got, want) {
			t.Fatalf("cut %d:\n got %s\nwant %s", c, got, want)
		}
	}
	other := AcquireRestorer(v, "team-b", 1)
	if got := other.Flush(other.Feed(nil, answer)); !bytes.Equal(got, answer) {
		t.Fatalf("another scope restored: %s", got)
	}
	ReleaseRestorer(other)

	// Level 2: the value inside JSON inside a JSON string (tool arguments).
	args := AcquireRestorer(v, "team-a", 2)
	defer ReleaseRestorer(args)
	inner := `{\"content\":\"` + string(phs[0]) + `\"}`
	got := args.Flush(args.Feed(nil, []byte(inner)))
	var outer string
	if err := json.Unmarshal([]byte(`"`+string(got)+`"`), &outer); err != nil {
		t.Fatalf("level 2 output is not string content: %v: %s", err, got)
	}
	var obj struct{ Content string }
	if err := json.Unmarshal([]byte(outer), &obj); err != nil {
		t.Fatalf("level 2 arguments are not JSON: %v: %s", err, outer)
	}
	var orig string
	if err := json.Unmarshal([]byte(`"`+pemSec.value+`"`), &orig); err != nil {
		t.Fatal(err)
	}
	if obj.Content != orig {
		t.Fatalf("level 2 restored %q, want %q", obj.Content, orig)
	}
}

// TestRestoreByteByByte: a placeholder arriving one byte per delta is
// restored, and text around it is not delayed beyond a possible prefix.
func TestRestoreByteByByte(t *testing.T) {
	v := NewVault(VaultConfig{})
	ph := "[REDACTED:x:abcdef]"
	v.Put("k", []byte(ph), []byte("va\"lue"))
	r := AcquireRestorer(v, "k", 1)
	defer ReleaseRestorer(r)
	in := "a [b] " + ph + " [REDACTED:x:abcdeg] end"
	var got []byte
	for k := 0; k < len(in); k++ {
		n := len(got)
		got = r.Feed(got, []byte(in[k:k+1]))
		if in[k] == ' ' && len(got) == n && !strings.Contains(in[:k], "[REDACTED:x:abcdeg") {
			t.Fatalf("space at %d delayed", k)
		}
	}
	got = r.Flush(got)
	if want := `a [b] va\"lue [REDACTED:x:abcdeg] end`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if r.Restored() != 1 {
		t.Fatalf("restored %d", r.Restored())
	}
}

// TestVaultBounds: the vault keeps at most its entries and bytes, evicting
// the least recently used.
func TestVaultBounds(t *testing.T) {
	v := NewVault(VaultConfig{MaxEntries: 3, MaxBytes: 1 << 20})
	for k := 0; k < 3; k++ {
		v.Put("s", []byte(fmt.Sprint(k)), []byte("v"))
	}
	if _, ok := v.AppendValue(nil, "s", []byte("0"), 1); !ok { // 0 is now the most recent
		t.Fatal("0 missing")
	}
	v.Put("s", []byte("3"), []byte("v"))
	if _, ok := v.AppendValue(nil, "s", []byte("1"), 1); ok {
		t.Fatal("1 should have been evicted")
	}
	for _, k := range []string{"0", "2", "3"} {
		if _, ok := v.AppendValue(nil, "s", []byte(k), 1); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	if n, _ := v.Len(); n != 3 {
		t.Fatalf("%d entries", n)
	}
	small := NewVault(VaultConfig{MaxBytes: 400})
	for k := 0; k < 10; k++ {
		small.Put("scope", []byte(fmt.Sprint(k)), []byte(strings.Repeat("x", 50)))
	}
	if _, b := small.Len(); b > 400 {
		t.Fatalf("%d bytes over the bound", b)
	}
	small.Put("scope", []byte("big"), make([]byte, 1000))
	if _, ok := small.AppendValue(nil, "scope", []byte("big"), 1); ok {
		t.Fatal("a value over the bound was kept")
	}
}

// TestAppendRestored: the one-shot form restores as the stream does.
func TestAppendRestored(t *testing.T) {
	v := NewVault(VaultConfig{})
	v.Put("k", []byte("[REDACTED:a:000001]"), []byte("one\ntwo"))
	f := func(in string, levels int, want string) {
		t.Helper()
		if got := string(v.AppendRestored([]byte(">"), []byte(in), "k", levels)); got != ">"+want {
			t.Fatalf("AppendRestored(%q, %d) = %q, want %q", in, levels, got, ">"+want)
		}
	}
	f("x [REDACTED:a:000001] y", 1, `x one\ntwo y`)
	f(`{\"v\":\"[REDACTED:a:000001]\"}`, 2, `{\"v\":\"one\\ntwo\"}`)
	f("[REDACTED:a:000002]", 1, "[REDACTED:a:000002]")
	f("[REDACTED:a:00000", 1, "[REDACTED:a:00000")
}

// TestVaultConcurrent: many goroutines store and restore in shared scopes
// while the bound evicts (run with -race).
func TestVaultConcurrent(t *testing.T) {
	v := NewVault(VaultConfig{MaxEntries: 64})
	s := mustCompile(t, Config{Rules: []Rule{{Name: "github_token", Restore: true}}})
	done := make(chan bool)
	for w := 0; w < 4; w++ {
		go func(w int) {
			m := AcquireMatches()
			defer ReleaseMatches(m)
			g := newGen(uint64(w))
			for k := 0; k < 200; k++ {
				tok := "ghp_" + g.str(alAlnum, 36)
				body := []byte(`{"a":"` + tok + `"}`)
				s.ScanBody(body, m)
				out := m.AppendRedacted(nil, body, v, fmt.Sprint("scope", k%3))
				ph := phRE.Find(out)
				got := v.AppendRestored(nil, ph, fmt.Sprint("scope", k%3), 1)
				if !bytes.Equal(got, []byte(tok)) && !bytes.Equal(got, ph) {
					t.Errorf("restored %q", got)
				}
			}
			done <- true
		}(w)
	}
	for w := 0; w < 4; w++ {
		<-done
	}
	if n, _ := v.Len(); n > 64 {
		t.Fatalf("%d entries over the bound", n)
	}
}
