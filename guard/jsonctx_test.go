package guard

import (
	"strings"
	"testing"
)

// TestOpaqueMembers: a secret-shaped run inside a replay token, base64
// data or the model name is left alone, the same run in text beside it is
// found, and a member name that only ends like an opaque one is no
// exception.
func TestOpaqueMembers(t *testing.T) {
	s := mustCompile(t, Config{})
	m := AcquireMatches()
	defer ReleaseMatches(m)
	key := "AKIA" + newGen(9).str("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
	f := func(body string, want int) {
		t.Helper()
		b := []byte(strings.ReplaceAll(body, "KEY", key))
		s.ScanBody(b, m)
		if m.Len() != want {
			t.Fatalf("%s: %d matches, want %d", body, m.Len(), want)
		}
	}
	f(`{"type":"thinking","thinking":"t","signature":"Eq0K KEY =="}`, 0)
	f(`{"type":"redacted_thinking","data":"KEY"}`, 0)
	f(`{"type":"reasoning","encrypted_content" : "gAAA KEY"}`, 0)
	f(`{"thoughtSignature":"KEY"}`, 0)
	f(`{"thought_signature":"KEY","text":"KEY"}`, 1)
	f(`{"model":"KEY"}`, 0)
	f(`{"type":"text","text":"KEY"}`, 1)
	f(`{"xsignature":"KEY","my_data":"KEY"}`, 2)
	f(`{"a\"signature":"KEY"}`, 1)
	f(`["signature","KEY"]`, 1)
	f(`{"content":["KEY"],"data":{"text":"KEY"}}`, 2)
}
