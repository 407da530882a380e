package ws

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestAcceptKey: the example of RFC 6455 section 1.3.
func TestAcceptKey(t *testing.T) {
	if got := string(appendAccept(nil, []byte("dGhlIHNhbXBsZSBub25jZQ=="))); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("accept key %q", got)
	}
}

func TestHandshakeChecks(t *testing.T) {
	for _, tc := range []struct {
		name, version, key string
		want               int // 0: accepted
	}{
		{"ok", "13", "dGhlIHNhbXBsZSBub25jZQ==", 0},
		{"version listed", "8, 13", "dGhlIHNhbXBsZSBub25jZQ==", 0},
		{"old version", "8", "dGhlIHNhbXBsZSBub25jZQ==", fasthttp.StatusUpgradeRequired},
		{"no version", "", "dGhlIHNhbXBsZSBub25jZQ==", fasthttp.StatusUpgradeRequired},
		{"no key", "13", "", fasthttp.StatusBadRequest},
		{"key not base64", "13", "dGhlIHNhbXBsZSBub25jZQ!!", fasthttp.StatusBadRequest},
		{"key of 15 bytes", "13", "dGhlIHNhbXBsZSBub25jZQ=", fasthttp.StatusBadRequest},
		{"key of 17 bytes", "13", "dGhlIHNhbXBsZSBub25jZXg=", fasthttp.StatusBadRequest},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(fasthttp.MethodGet)
		ctx.Request.Header.Set("Upgrade", "websocket")
		ctx.Request.Header.Set("Connection", "keep-alive, Upgrade")
		if tc.version != "" {
			ctx.Request.Header.Set("Sec-WebSocket-Version", tc.version)
		}
		if tc.key != "" {
			ctx.Request.Header.Set("Sec-WebSocket-Key", tc.key)
		}
		if !IsUpgrade(&ctx) {
			t.Fatalf("%s: not an upgrade", tc.name)
		}
		got := 0
		if r := checkHandshake(&ctx); r != nil {
			got = r.status
		}
		if got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestHasToken(t *testing.T) {
	for v, want := range map[string]bool{
		"Upgrade":              true,
		"upgrade":              true,
		"keep-alive, Upgrade":  true,
		"keep-alive,\tupgrade": true,
		"upgraded":             false,
		"keep-alive":           false,
		"":                     false,
		"up grade":             false,
	} {
		if hasToken([]byte(v), "upgrade") != want {
			t.Errorf("hasToken(%q) = %v", v, !want)
		}
	}
}
