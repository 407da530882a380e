package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"slipstream/codec"
)

func shapeOf(d codec.Dialect) string {
	switch d {
	case codec.DialectAnthropic:
		return "anthropic"
	case codec.DialectGemini:
		return "gemini"
	}
	return "openai"
}

// TestKeyRPM: rpm: 5 passes 5 requests and refuses the 6th with 429 and
// Retry-After, in each dialect.
func TestKeyRPM(t *testing.T) {
	t.Parallel()
	up := &credUpstream{}
	u := newUpstream(t, up)
	for i, c := range dialectCases {
		t.Run(c.name, func(t *testing.T) {
			yml := fmt.Sprintf("keys:\n  - {name: ci, key: sk-client, rpm: 5}\nproviders:\n  - {name: p, %s, base_url: %q, keys: [k], models: [m1]}\ntimeouts: {keepalive: 0s}\n", c.kind, u.URL+c.suffix)
			base, _ := startServer(t, yml, "")
			path, body := clientRequest(i, false)
			for n := 1; n <= 5; n++ {
				if status, _, b := post(t, base+path, body, "Authorization", "Bearer sk-client"); status != 200 {
					t.Fatalf("request %d: %d %s", n, status, b)
				}
			}
			status, h, b := post(t, base+path, body, "Authorization", "Bearer sk-client")
			if status != 429 || h.Get("Retry-After") != "72" { // sliding window at a minute boundary: the 5 slide out 12 s into the next minute
				t.Fatalf("6th: %d retry-after %q %s", status, h.Get("Retry-After"), b)
			}
			checkShape(t, shapeOf(c.d), b)
		})
	}
}

// TestKeyModelsAndDigest: a key written as its SHA-256 digest is
// accepted; a model outside its globs is 403; a wrong key is 401.
func TestKeyModelsAndDigest(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, &credUpstream{})
	sum := sha256.Sum256([]byte("sk-digest-client"))
	yml := fmt.Sprintf("keys:\n  - {name: d, key_sha256: %s, models: [\"m*\"]}\nproviders:\n  - {name: p, kind: openai, base_url: %q, keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", hex.EncodeToString(sum[:]), u.URL+"/v1")
	base, _ := startServer(t, yml, "")
	path, body := clientRequest(1, false)
	if status, _, b := post(t, base+path, body, "Authorization", "Bearer sk-digest-client"); status != 200 {
		t.Fatalf("digest key: %d %s", status, b)
	}
	if status, _, _ := post(t, base+path, `{"model":"other","messages":[]}`, "Authorization", "Bearer sk-digest-client"); status != 403 {
		t.Fatalf("disallowed model: %d", status)
	}
	if status, _, _ := post(t, base+path, body, "Authorization", "Bearer "+hex.EncodeToString(sum[:])); status != 401 {
		t.Fatalf("the digest itself: %d", status)
	}
}

// TestKeyTokenLimits: tpm and a daily budget are charged from the
// upstream's real usage (chatReply reports 3 + 1 tokens).
func TestKeyTokenLimits(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, &credUpstream{})
	f := func(policy string, passes int, retryAfter string) {
		t.Helper()
		yml := fmt.Sprintf("keys:\n  - {name: ci, key: sk-client, %s}\nproviders:\n  - {name: p, kind: openai, base_url: %q, keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n", policy, u.URL+"/v1")
		base, _ := startServer(t, yml, "")
		path, body := clientRequest(0, false) // Anthropic client, Chat upstream: usage read while translating
		for n := 1; n <= passes; n++ {
			if status, _, b := post(t, base+path, body, "X-Api-Key", "sk-client"); status != 200 {
				t.Fatalf("%s: request %d: %d %s", policy, n, status, b)
			}
		}
		status, h, b := post(t, base+path, body, "X-Api-Key", "sk-client")
		if status != 429 || h.Get("Retry-After") != retryAfter {
			t.Fatalf("%s: after %d: %d retry-after %q %s", policy, passes, status, h.Get("Retry-After"), b)
		}
		checkShape(t, "anthropic", b)
	}
	f("tpm: 6", 2, "83")        // 4, 8 counted: room for a token again (a count of 5) 22.5 s into the next minute
	f("budget: 10", 3, "86400") // 4, 8, 12 used; the test clock is at midnight UTC
	f("budget: 10, period: monthly", 3, "2678400")
}
