package guard

import (
	"strings"
	"testing"
)

// TestOpaqueMembers: a secret-shaped run inside a long base64 replay token
// or file data is left alone; the same run in text beside it, in a short
// value of such a member (a tool argument named data), in a value that is
// not base64 (a text document's data) or under another name is found.
func TestOpaqueMembers(t *testing.T) {
	s := mustCompile(t, Config{})
	m := AcquireMatches()
	defer ReleaseMatches(m)
	key := "AKIA" + newGen(9).str("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	blob := newGen(10).str("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 300)
	f := func(body string, want int) {
		t.Helper()
		b := []byte(strings.NewReplacer("BLOB", blob, "KEY", key).Replace(body))
		s.ScanBody(b, m)
		if m.Len() != want {
			t.Fatalf("%s: %d matches, want %d", body, m.Len(), want)
		}
	}
	f(`{"type":"thinking","thinking":"t","signature":"BLOB/KEY/BLOB=="}`, 0)
	f(`{"type":"redacted_thinking","data":"BLOB KEY BLOB"}`, 1) // not base64
	f(`{"type":"redacted_thinking","data":"BLOB\/KEY\/BLOB"}`, 0)
	f(`{"type":"reasoning","encrypted_content" : "gAAA-_BLOB/KEY"}`, 0)
	f(`{"thoughtSignature":"BLOB+KEY"}`, 0)
	f(`{"thought_signature":"BLOB/KEY","text":"KEY"}`, 1)
	f(`{"name":"upload","input":{"data":"KEY"}}`, 1) // short: a tool argument
	f(`{"model":"KEY"}`, 1)
	f(`{"type":"text","text":"BLOB/KEY"}`, 1)
	f(`{"xsignature":"BLOB/KEY","my_data":"BLOB/KEY"}`, 2)
	f(`{"a\"signature":"BLOB/KEY"}`, 1)
	f(`["signature","BLOB/KEY"]`, 1)
}

// TestOpaqueOncePerString: many matches inside one long value cost one
// look at the value, not one per match (a hostile body of secret-shaped
// runs in a megabyte of base64 would otherwise cost quadratic time).
func TestOpaqueOncePerString(t *testing.T) {
	s := mustCompile(t, Config{})
	m := AcquireMatches()
	defer ReleaseMatches(m)
	g := newGen(11)
	var v strings.Builder
	for range 20000 {
		v.WriteString("/AKIA" + g.str("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16))
	}
	for _, name := range []string{"data", "text"} {
		body := []byte(`{"` + name + `":"` + v.String() + `"}`)
		s.ScanBody(body, m)
		if want := map[string]int{"data": 0, "text": 20000}[name]; m.Len() != want {
			t.Fatalf("%s: %d matches, want %d", name, m.Len(), want)
		}
	}
}
