package e2e

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestSDKsThroughKeepalivePings: the official SDKs get whole answers when
// the upstream's head comes late enough for slipstream to commit its
// streams to a 200 and ping (: ping comments every 100 ms, for 350 ms,
// on a connection that closes after the stream), translated or not.
// Every case of the scripts runs against such an upstream; the
// non-streamed ones simply wait.
func TestSDKsThroughKeepalivePings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg, script string
		check       func(*testing.T, sdkResults)
	}{
		{"@anthropic-ai/sdk", "anthropic.mjs", testAnthropicSDK},
		{"openai", "openai.mjs", testOpenAISDK},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			node := needNode(t, tc.pkg)
			for _, up := range []struct{ kind, api, dialect string }{
				{"anthropic", "", dialectAnthropic},
				{"openai", "chat", dialectChat},
			} {
				t.Run(up.dialect, func(t *testing.T) {
					decide := sdkStubDecide(up.dialect)
					s := newStub(t, up.dialect, func(r *stubReq) stubAnswer {
						time.Sleep(350 * time.Millisecond) // three pings before the head
						return decide(r)
					})
					cfg := strings.Replace(upstreamConfig(up.kind, up.api, s.BaseURL()), "keepalive: 0s", "keepalive: 100ms", 1)
					p := startSlipstream(t, cfg)
					wantPings(t, p)
					tc.check(t, runSDK(t, node, tc.script, p))
				})
			}
		})
	}
}

// wantPings checks that a streamed request to p is answered by the
// keep-alive path: a 200 event stream that closes its connection, whose
// body starts with pings.
func wantPings(t *testing.T, p *proxy) {
	t.Helper()
	resp := postAnthropic(t, p, "/v1/messages", `{"model":"e2e","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !resp.Close || !strings.HasPrefix(string(body), ": ping\n\n: ping\n\n") || !strings.Contains(string(body), "message_stop") {
		t.Fatalf("status %d, close %v, body %.200q: want a stream that pinged, then the answer", resp.StatusCode, resp.Close, body)
	}
}
