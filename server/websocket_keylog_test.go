package server

import (
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
)

// TestWSQueryKeyNeverLogged: a client may authenticate its WebSocket
// upgrade with ?key=; the transport's log lines name the path, never the
// query that carries the key.
func TestWSQueryKeyNeverLogged(t *testing.T) {
	t.Parallel()
	const key = "sk-alice-0123456789"
	u := &sseUpstream{reply: func(n int, _ []byte) upReply { return upReply{body: textAnswer("resp_1", "hi")} }}
	up := newUpstream(t, u)
	yml := `keys:
  - {name: alice, key: ` + key + `}
providers:
  - {name: up, kind: openai, api: responses, base_url: "` + up.URL + `/v1", keys: [k], models: ["*"]}
timeouts: {keepalive: 0s}
log: {access: true, format: json}
`
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml, ""), &logs)
	c, _ := wsDial(t, base, "/v1/responses?key="+key)
	wsSend(t, c, frameJSON(`[{"type":"message","role":"user","content":"hi"}]`, ""))
	wsResponse(t, c)
	c.Close()
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(logs.String(), "close frames=") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	l := logs.String()
	if !strings.Contains(l, `WS \"/v1/responses\" open`) || !strings.Contains(l, "close frames=1") {
		t.Fatalf("the transport's log lines are missing:\n%s", l)
	}
	if strings.Contains(l, key) || strings.Contains(l, "key=") {
		t.Fatalf("the client key reached the log:\n%s", l)
	}
}
