package server

import (
	"fmt"
	"testing"
	"time"
)

// TestWSSlowUpstreamAnswersWithItsHead: keep-alive pings are SSE comments,
// which a WebSocket client never gets, so a turn whose upstream is slower
// than timeouts.keepalive does not commit to a 200 before the upstream
// answers: its turn state and its error status (with retry-after) reach
// the client as they do when the upstream is quick.
func TestWSSlowUpstreamAnswersWithItsHead(t *testing.T) {
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		time.Sleep(250 * time.Millisecond) // five keep-alive intervals
		if n == 2 {
			return upReply{status: 429, body: `{"error":{"type":"rate_limit_error","code":"rate_limit_exceeded","message":"upstream says no","param":null}}`, header: map[string]string{"Retry-After": "7"}}
		}
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok"), header: map[string]string{"X-Codex-Turn-State": "ts-slow"}}
	}}
	up := newUpstream(t, u)
	yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 50ms}\n"
	base, _ := startServer(t, yml, up.URL)
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	evs := wsResponse(t, c)
	if evs[0].Type != "response.metadata" || evs[0].Headers["x-codex-turn-state"] != "ts-slow" {
		t.Errorf("first event %s, want response.metadata with the turn state", evs[0].Raw)
	}
	if e := last(evs); e.Type != "response.completed" {
		t.Fatalf("last event %s, want response.completed", e.Raw)
	}
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	e := last(wsResponse(t, c))
	if e.Type != "error" || e.Status != 429 || e.Error.Code != "rate_limit_exceeded" || e.Headers["retry-after"] != "7" {
		t.Fatalf("error event %s, want status 429, rate_limit_exceeded, retry-after 7", e.Raw)
	}
}
