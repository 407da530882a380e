package fuzz

import (
	"strings"
	"testing"

	"slipstream/chaos"
	"slipstream/codec"
)

// TestUpstreamModels: the allow-list property sees every top-level model
// member a provider could read, after unescaping, even in a body a strict
// parser refuses.
func TestUpstreamModels(t *testing.T) {
	f := func(body string, want ...string) {
		t.Helper()
		got := upstreamModels(codec.DialectChat, &chaos.Request{Body: []byte(body)})
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%q: got %q, want %q", body, got, want)
		}
	}
	f(`{"model":"a","messages":[]}`, "a")
	f(`{"model":"a","x":{"model":"inner"},"model":"b"}`, "a", "b")
	f(`{"mod\u0065l":"b","model":"a"}`, "b", "a")
	f("{\"model\":\"a\",\"c\":\"\x17\",\"model\":\"b\"}", "a", "b")
	f(`{"model":["a"]}`, `["a"]`)
	f(`{"messages":[]}`)
	g := upstreamModels(codec.DialectGemini, &chaos.Request{URI: "/v1beta/models/fz-gem-ok:generateContent", Body: []byte(`{"model":"x"}`)})
	if len(g) != 1 || g[0] != "fz-gem-ok" {
		t.Fatalf("gemini: %q", g)
	}
}
