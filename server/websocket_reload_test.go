package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// wsReloadYAML is a WebSocket server's configuration with the given
// client keys (name: secret pairs).
func wsReloadYAML(keys ...string) string {
	yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s, ws_ping: 100ms}\nkeys:\n"
	for i := 0; i+1 < len(keys); i += 2 {
		yml += fmt.Sprintf("  - {name: %s, key: %s}\n", keys[i], keys[i+1])
	}
	return yml
}

// TestWSReloadStormKeepsSockets: 50 reloads while a client sends turns on
// one socket: the socket stays open and every frame is answered (before,
// each reload closed the socket with 1001, and a frame racing the reload
// got no answer at all).
func TestWSReloadStormKeepsSockets(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply { return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")} }}
	up := newUpstream(t, u)
	base, s := startServer(t, wsReloadYAML("alice", "sk-alice-0123456789"), up.URL)
	cfgs := [2]string{wsReloadYAML("alice", "sk-alice-0123456789"), wsReloadYAML("alice", "sk-alice-0123456789", "bob", "sk-bob-0123456789")}
	c, _ := wsDial(t, base, "/v1/responses", "Authorization", "Bearer sk-alice-0123456789")

	var reloads atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			if err := s.Reload(parseConfig(t, cfgs[i%2], up.URL)); err != nil {
				t.Error(err)
				return
			}
			reloads.Add(1)
			time.Sleep(5 * time.Millisecond) // spread the storm over the turns
		}
	}()
	turns, prev := 0, ""
	deadline := time.Now().Add(30 * time.Second)
	for turns < 20 || reloads.Load() < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("%d turns, %d reloads in 30 s", turns, reloads.Load())
		}
		wsSend(t, c, frameJSON("["+userHi+"]", prev))
		e := last(wsResponse(t, c)) // fails on a close or no answer
		if e.Type != "response.completed" {
			t.Fatalf("turn %d after %d reloads: %s", turns, reloads.Load(), e.Raw)
		}
		prev = e.Response.ID // the transcript survives the reloads too
		turns++
	}
	<-done
	t.Logf("%d turns answered on one socket across %d reloads", turns, reloads.Load())
	if n := s.ws.Conns(); n != 1 {
		t.Fatalf("%d sockets open, want 1", n)
	}
}

// TestWSReloadClosesRevokedKeySockets: a reload that removes or changes a
// key closes the sockets opened with it (1008, with a reason) and keeps
// the others open and serving.
func TestWSReloadClosesRevokedKeySockets(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	u := &sseUpstream{reply: func(n int, b []byte) upReply {
		r := upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")}
		if strings.Contains(string(b), "hold-please") {
			r.hold, r.gone = hold, make(chan struct{})
		}
		return r
	}}
	up := newUpstream(t, u)
	base, s := startServer(t, wsReloadYAML("alice", "sk-alice-0123456789", "bob", "sk-bob-0123456789"), up.URL)
	alice, _ := wsDial(t, base, "/v1/responses", "Authorization", "Bearer sk-alice-0123456789")
	bob, _ := wsDial(t, base, "/v1/responses", "X-Api-Key", "sk-bob-0123456789")
	turn := func(c *websocket.Conn, who string) {
		t.Helper()
		wsSend(t, c, frameJSON("["+userHi+"]", ""))
		if e := last(wsResponse(t, c)); e.Type != "response.completed" {
			t.Fatalf("%s: %s", who, e.Raw)
		}
	}
	closed := func(c *websocket.Conn, who string) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		if !websocket.IsCloseError(err, websocket.ClosePolicyViolation) || !strings.Contains(err.Error(), "API key") {
			t.Fatalf("%s after its key was revoked: %v, want close 1008 naming the key", who, err)
		}
	}
	turn(alice, "alice")
	turn(bob, "bob")

	// bob's key is removed while bob has a response in flight: it is
	// answered whole, then bob's socket closes; alice's stays.
	wsSend(t, bob, frameJSON(`[{"type":"message","role":"user","content":"hold-please"}]`, ""))
	_ = bob.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := bob.ReadMessage(); err != nil { // the response has begun
		t.Fatal(err)
	}
	if err := s.Reload(parseConfig(t, wsReloadYAML("alice", "sk-alice-0123456789"), up.URL)); err != nil {
		t.Fatal(err)
	}
	close(hold)
	if e := last(wsResponse(t, bob)); e.Type != "response.completed" {
		t.Fatalf("bob's response in flight during the reload: %s", e.Raw)
	}
	closed(bob, "bob")
	turn(alice, "alice after bob's key was removed")

	// alice's key changes (same name, new secret): alice's socket closes.
	if err := s.Reload(parseConfig(t, wsReloadYAML("alice", "sk-alice-rotated-0123"), up.URL)); err != nil {
		t.Fatal(err)
	}
	closed(alice, "alice")
	waitConns(t, s, 0)
}
