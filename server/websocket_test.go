package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// The Responses WebSocket transport, driven by a raw WebSocket client the
// way Codex CLI drives it. Each test names the scenario it covers.

const (
	userHi   = `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	devMsg   = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"base instructions"}]}`
	userMore = `{"type":"message","role":"user","content":[{"type":"input_text","text":"and more"}]}`
)

// Scenario 1: the upgrade selects no subprotocol, with and without
// permessage-deflate, sets no openai-model header, and advertises the
// frame limit.
func TestWSUpgrade(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "hello")} }}
	base, _ := wsServer(t, u, "limits: {max_body_bytes: 1000000}\n")
	for _, compress := range []bool{false, true} {
		c, resp, err := wsTryDial(base, "/v1/responses", compress, "Openai-Beta", "responses_websockets=2026-02-06")
		if err != nil {
			t.Fatalf("dial (compress %v): %v", compress, err)
		}
		if resp.StatusCode != 101 || c.Subprotocol() != "" || resp.Header.Get("Openai-Model") != "" {
			t.Errorf("101: status %d, subprotocol %q, openai-model %q", resp.StatusCode, c.Subprotocol(), resp.Header.Get("Openai-Model"))
		}
		if got := resp.Header.Get("X-Codex-Websocket-Max-Message-Bytes"); got != "1000000" {
			t.Errorf("x-codex-websocket-max-message-bytes = %q, want 1000000", got)
		}
		wsSend(t, c, frameJSON("["+userHi+"]", ""))
		if e := last(wsResponse(t, c)); e.Type != "response.completed" || e.Response.ID != "resp_1" {
			t.Errorf("compress %v: last event %s", compress, e.Raw)
		}
		c.Close()
	}
	// A POST on the same path still works, and a GET without Upgrade is
	// not taken for a WebSocket.
	if code, _, body := post(t, base+"/v1/responses", frameJSON("["+userHi+"]", "")); code != 200 {
		t.Errorf("POST /v1/responses: %d %s", code, body)
	}
}

// Scenario 2: a prewarm (generate:false) is answered locally with created
// and completed; the next frame chains on its id with only new items, and
// the upstream gets the prewarm input followed by them.
func TestWSPrewarm(t *testing.T) {
	t.Parallel()
	for _, prewarmInput := range []string{"[]", "[" + devMsg + "]"} {
		u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_up", "pong")} }}
		base, _ := wsServer(t, u, "")
		c, _ := wsDial(t, base, "/v1/responses")
		wsSend(t, c, frameJSON(prewarmInput, "", `"generate":false`))
		evs := wsResponse(t, c)
		if len(evs) != 2 || evs[0].Type != "response.created" || evs[1].Type != "response.completed" || evs[1].Response.ID == "" {
			t.Fatalf("prewarm answered %d events, last %s", len(evs), last(evs).Raw)
		}
		if u.count() != 0 {
			t.Fatalf("the prewarm reached the upstream")
		}
		wsSend(t, c, frameJSON("["+userHi+"]", evs[1].Response.ID))
		if e := last(wsResponse(t, c)); e.Type != "response.completed" {
			t.Fatalf("turn after prewarm: %s", e.Raw)
		}
		m, _ := u.request(t, 0)
		want := []string{userHi}
		if prewarmInput != "[]" {
			want = []string{devMsg, userHi}
		}
		wantItems(t, inputOf(t, m), want)
		for _, k := range []string{"type", "generate", "previous_response_id"} {
			if _, ok := m[k]; ok {
				t.Errorf("upstream body has %q", k)
			}
		}
		if m["stream"] != true {
			t.Errorf("upstream stream = %v, want true", m["stream"])
		}
	}
}

func wantItems(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("upstream input has %d items, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
	for i := range want {
		if !jsonEqual(got[i], want[i]) {
			t.Errorf("input item %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// Scenarios 3 and 4: a tool loop on one socket. The follow-ups carry only
// the tool output and previous_response_id; the upstream gets
// prev_input ++ [call item] ++ [output], for a function_call and then a
// custom_tool_call, and the final text and usage reach the client.
func TestWSToolLoopExpansion(t *testing.T) {
	t.Parallel()
	fc := `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"echo hi\"}"}`
	ctc := `{"id":"ctc_1","type":"custom_tool_call","status":"completed","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n"}`
	fco := `{"type":"function_call_output","call_id":"call_1","output":"hi\n"}`
	ctco := `{"type":"custom_tool_call_output","call_id":"call_2","output":"Done!"}`
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		switch n {
		case 1:
			return upReply{body: callAnswer("resp_a", fc)}
		case 2:
			return upReply{body: callAnswer("resp_b", ctc)}
		}
		return upReply{body: textAnswer("resp_c", "all done")}
	}}
	base, _ := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+devMsg+","+userHi+"]", ""))
	if e := last(wsResponse(t, c)); e.Response.ID != "resp_a" {
		t.Fatalf("first response: %s", e.Raw)
	}
	wsSend(t, c, frameJSON("["+fco+"]", "resp_a"))
	if e := last(wsResponse(t, c)); e.Response.ID != "resp_b" {
		t.Fatalf("second response: %s", e.Raw)
	}
	wsSend(t, c, frameJSON("["+ctco+"]", "resp_b"))
	evs := wsResponse(t, c)
	e := last(evs)
	if e.Response.ID != "resp_c" || !strings.Contains(string(e.Raw), `"total_tokens":14`) || !strings.Contains(string(evs[2].Raw), "all done") {
		t.Fatalf("third response: %s", e.Raw)
	}
	m, _ := u.request(t, 1)
	wantItems(t, inputOf(t, m), []string{devMsg, userHi, fc, fco})
	m, _ = u.request(t, 2)
	wantItems(t, inputOf(t, m), []string{devMsg, userHi, fc, fco, ctc, ctco})
}

// Scenario 5: turns on one socket (turn 2 sends only the new user
// message); a server-initiated close between turns (shutdown) is a clean
// 1001 after the completed response.
func TestWSMultiTurnAndServerClose(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), fmt.Sprintf("answer %d", n))}
	}}
	base, s := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	wsResponse(t, c)
	wsSend(t, c, frameJSON("["+userMore+"]", "resp_1"))
	wsResponse(t, c)
	m, _ := u.request(t, 1)
	items := inputOf(t, m)
	if len(items) != 3 || !jsonEqual(items[2], userMore) {
		t.Fatalf("turn 2 input = %q", items)
	}
	if s.ws.Conns() != 1 {
		t.Fatalf("%d connections open, want 1", s.ws.Conns())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go s.shutdownWebSocket(ctx)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := c.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("after shutdown: %v, want close 1001", err)
	}
}

// Scenario 6: a frame without previous_response_id replaces the state; an
// empty incremental input is valid.
func TestWSReplaceAndEmptyIncrement(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")}
	}}
	base, _ := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	wsResponse(t, c)
	wsSend(t, c, frameJSON("["+userMore+"]", "")) // full input: replaces
	wsResponse(t, c)
	m, _ := u.request(t, 1)
	wantItems(t, inputOf(t, m), []string{userMore})
	wsSend(t, c, frameJSON("[]", "resp_2"))
	if e := last(wsResponse(t, c)); e.Type != "response.completed" {
		t.Fatalf("empty increment: %s", e.Raw)
	}
	m, _ = u.request(t, 2)
	if items := inputOf(t, m); len(items) != 2 || !jsonEqual(items[0], userMore) {
		t.Fatalf("after an empty increment the input is %q", items)
	}
	// The replaced state is gone: chaining on resp_1 fails.
	wsSend(t, c, frameJSON("["+userHi+"]", "resp_1"))
	if e := last(wsResponse(t, c)); e.Error.Code != "previous_response_not_found" {
		t.Fatalf("chaining on a replaced response: %s", e.Raw)
	}
}

// Scenario 7: an unknown or stale previous_response_id, or one whose
// transcript was evicted (limits.ws_state_bytes), gets a 400
// previous_response_not_found; the full resend on a new socket succeeds.
func TestWSPreviousResponseNotFound(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")}
	}}
	base, s := wsServer(t, u, "limits: {ws_state_bytes: 40000}\n")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", "resp_unknown"))
	e := last(wsResponse(t, c))
	if e.Type != "error" || e.Status != 400 || e.Error.Code != "previous_response_not_found" {
		t.Fatalf("unknown id: %s", e.Raw)
	}
	if u.count() != 0 {
		t.Fatalf("an unresolvable frame reached the upstream")
	}
	// Eviction: two sockets whose transcripts do not fit together.
	big := `{"type":"message","role":"user","content":"` + strings.Repeat("x", 12000) + `"}`
	a, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, a, frameJSON("["+big+"]", ""))
	wsResponse(t, a)
	// a's transcript is stored just after its completed event went out:
	// wait for it, so that b's is the later one.
	waitState(t, s, func(n int64) bool { return n > 12000 })
	b, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, b, frameJSON("["+big+","+big+"]", ""))
	if e := last(wsResponse(t, b)); e.Type != "response.completed" {
		t.Fatalf("b: %s", e.Raw)
	}
	waitState(t, s, func(n int64) bool { return n > 20000 && s.ws.Stats().Evicted > 0 })
	if used := s.ws.StateBytes(); used > 40000 {
		t.Fatalf("state holds %d bytes, over ws_state_bytes 40000", used)
	}
	wsSend(t, a, frameJSON("["+userMore+"]", "resp_1"))
	if e := last(wsResponse(t, a)); e.Error.Code != "previous_response_not_found" {
		t.Fatalf("evicted transcript: %s", e.Raw)
	}
	if st := s.ws.Stats(); st.Evicted == 0 || st.NotFound != 2 || st.Chained != 0 {
		t.Errorf("stats %+v: want an eviction, two not-found answers, no chained frame served", st)
	}
	// Codex now resends the whole input on a new socket.
	n := u.count()
	c2, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c2, frameJSON("["+big+","+userMore+"]", ""))
	if e := last(wsResponse(t, c2)); e.Type != "response.completed" {
		t.Fatalf("full resend: %s", e.Raw)
	}
	m, _ := u.request(t, n)
	wantItems(t, inputOf(t, m), []string{big, userMore})
}

// Scenario 8: upstream HTTP errors become wrapped error events with their
// status (and retry-after); response.failed passes through; a stream error
// event without status gets one.
func TestWSErrors(t *testing.T) {
	t.Parallel()
	f := func(reply upReply, wantType string, wantStatus int, wantCode string) {
		t.Helper()
		u := &sseUpstream{reply: func(int, []byte) upReply { return reply }}
		base, _ := wsServer(t, u, "")
		c, _ := wsDial(t, base, "/v1/responses")
		wsSend(t, c, frameJSON("["+userHi+"]", ""))
		e := last(wsResponse(t, c))
		if e.Type != wantType || e.Status != wantStatus || e.Error.Code != wantCode {
			t.Errorf("got %s; want type %s status %d code %q", e.Raw, wantType, wantStatus, wantCode)
		}
		if reply.header["Retry-After"] != "" && e.Headers["retry-after"] != reply.header["Retry-After"] {
			t.Errorf("retry-after = %q, want %q", e.Headers["retry-after"], reply.header["Retry-After"])
		}
		// The socket stays usable after an error.
		wsSend(t, c, frameJSON("["+userHi+"]", ""))
		wsResponse(t, c)
	}
	errBody := func(typ, code string) string {
		return `{"error":{"type":"` + typ + `","code":"` + code + `","message":"upstream says no","param":null}}`
	}
	f(upReply{status: 400, body: errBody("invalid_request_error", "bad_thing")}, "error", 400, "bad_thing")
	f(upReply{status: 429, body: errBody("rate_limit_error", "rate_limit_exceeded"), header: map[string]string{"Retry-After": "2"}}, "error", 429, "rate_limit_exceeded")
	f(upReply{status: 500, body: errBody("server_error", "boom")}, "error", 500, "boom")
	f(upReply{status: 503, body: errBody("server_error", "overloaded")}, "error", 503, "overloaded")
	f(upReply{status: 409, body: errBody("invalid_request_error", "conflict")}, "error", 409, "conflict")
	f(upReply{status: 502, body: "<html>bad gateway</html>"}, "error", 502, "")
	for _, code := range []string{"server_error", "context_length_exceeded", "rate_limit_exceeded"} {
		failed := sseEvents(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_f","status":"in_progress","output":[]}}`,
			`{"type":"response.failed","sequence_number":1,"response":{"id":"resp_f","status":"failed","error":{"code":"`+code+`","message":"Rate limit reached. Please try again in 1s."},"output":[]}}`)
		f(upReply{body: failed}, "response.failed", 0, "")
	}
	streamErr := sseEvents(`{"type":"error","sequence_number":0,"code":"rate_limit_exceeded","message":"slow down","param":null}`)
	f(upReply{body: streamErr}, "error", 429, "rate_limit_exceeded")
	f(upReply{body: sseEvents(`{"type":"error","sequence_number":0,"code":"server_error","message":"oops","param":null}`)}, "error", 500, "server_error")
	// A stream cut short: the server's truncation event is response.failed.
	f(upReply{body: sseEvents(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_t","status":"in_progress","output":[]}}`)}, "response.failed", 0, "")
	// A bad frame gets a 400 and the socket stays open.
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, _ := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	for _, bad := range []string{`{"type":"response.append","input":[]}`, `not json`, `[1,2]`} {
		wsSend(t, c, bad)
		if e := last(wsResponse(t, c)); e.Type != "error" || e.Status != 400 {
			t.Errorf("frame %s: %s", bad, e.Raw)
		}
	}
	if err := c.WriteMessage(websocket.BinaryMessage, []byte(frameJSON("[]", ""))); err != nil {
		t.Fatal(err)
	}
	if e := last(wsResponse(t, c)); e.Type != "error" || e.Status != 400 {
		t.Errorf("binary frame: %s", e.Raw)
	}
}

// Scenario 9 (and 11): a frame over the limit advertised in
// x-codex-websocket-max-message-bytes is closed with 1009, Codex's signal to
// fall back to HTTP; a client that drops mid-stream ends the upstream
// request and frees its state.
func TestWSFrameLimitAndClientDrop(t *testing.T) {
	t.Parallel()
	hold, gone := make(chan struct{}), make(chan struct{})
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		if n == 2 {
			return upReply{body: textAnswer("resp_2", "never"), hold: hold, gone: gone}
		}
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")}
	}}
	base, s := wsServer(t, u, "limits: {max_body_bytes: 20000}\n")
	c, resp := wsDial(t, base, "/v1/responses")
	if resp.Header.Get("X-Codex-Websocket-Max-Message-Bytes") != "20000" {
		t.Fatalf("advertised limit %q", resp.Header.Get("X-Codex-Websocket-Max-Message-Bytes"))
	}
	wsSend(t, c, frameJSON(`[{"type":"message","role":"user","content":"`+strings.Repeat("y", 30000)+`"}]`, ""))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("oversized frame: %v, want close 1009", err)
	}
	// Mid-stream drop.
	c2, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c2, frameJSON("["+userHi+"]", ""))
	wsResponse(t, c2)
	waitState(t, s, func(n int64) bool { return n > 0 })
	wsSend(t, c2, frameJSON("["+userMore+"]", "resp_1"))
	_ = c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := c2.ReadMessage(); err != nil { // the first event arrives
		t.Fatal(err)
	}
	c2.NetConn().Close() // TCP drop, as Codex on interrupt
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		close(hold)
		t.Fatalf("the upstream request was not cancelled after the client dropped")
	}
	deadline := time.Now().Add(5 * time.Second)
	for (s.ws.Conns() != 0 || s.ws.StateBytes() != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.ws.Conns() != 0 || s.ws.StateBytes() != 0 {
		t.Fatalf("after the drop: %d connections, %d state bytes", s.ws.Conns(), s.ws.StateBytes())
	}
}

// Scenario 10: past limits.ws_connections an upgrade is answered 426, on
// which Codex uses HTTP.
func TestWSTooManyConnections426(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, s := wsServer(t, u, "limits: {ws_connections: 1}\n")
	wsDial(t, base, "/v1/responses")
	// The first connection counts once its socket is taken over, just
	// after its 101: an upgrade answered before that is closed at once
	// instead of refused (ws.TestAddHoldsTheLimit).
	waitConns(t, s, 1)
	_, resp, err := wsTryDial(base, "/v1/responses", false)
	if err == nil || resp == nil || resp.StatusCode != 426 {
		t.Fatalf("second connection: %v, %v; want 426", err, resp)
	}
}

// TestWSUpgradeThatNeverOpensFreesItsSlot: an upgrade whose socket never
// reaches the transport (a request that also says Connection: close, on
// which fasthttp closes instead of handing the socket over; a client gone
// before its 101) does not keep one of limits.ws_connections: a hostile
// client repeating it would refuse every later WebSocket.
func TestWSUpgradeThatNeverOpensFreesItsSlot(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, s := wsServer(t, u, "limits: {ws_connections: 1}\n")
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", base[len("http://"):])
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, c) // the answer, then the server's close
		c.Close()
	}
	for i := 0; i < 3; i++ { // gone before the 101: reset at once
		c, err := net.Dial("tcp", base[len("http://"):])
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		_ = c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.ws.Conns() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	c, resp, err := wsTryDial(base, "/v1/responses", false)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("a WebSocket after upgrades that never opened: %v (status %d)", err, status)
	}
	c.Close()
}

// Scenario 12: an upstream x-codex-turn-state header reaches the client as
// a response.metadata event first; the client's
// client_metadata["x-codex-turn-state"] reaches the upstream as that
// header, and a turn without it sends none. Tunnelled headers
// (ws_request_header_*) become headers; WebSocket-only metadata is dropped.
func TestWSTurnState(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		r := upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")}
		if n == 1 {
			r.header = map[string]string{"X-Codex-Turn-State": "ts-42"}
		}
		return r
	}}
	base, _ := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses", "Openai-Beta", "responses_websockets=2026-02-06", "Session-Id", "th-1", "X-Codex-Turn-Metadata", `{"request_kind":"prewarm"}`)
	wsSend(t, c, frameJSON("["+userHi+"]", "", `"client_metadata":{"session_id":"th-1","x-codex-ws-stream-request-start-ms":"123","ws_request_header_x_openai_internal_codex_responses_lite":"true","x-codex-turn-metadata":"{\"request_kind\":\"turn\"}"}`))
	evs := wsResponse(t, c)
	if evs[0].Type != "response.metadata" || evs[0].Headers["x-codex-turn-state"] != "ts-42" {
		t.Fatalf("first event %s, want response.metadata with the turn state", evs[0].Raw)
	}
	m, h := u.request(t, 0)
	md, _ := m["client_metadata"].(map[string]any)
	if md["session_id"] != "th-1" || md["x-codex-ws-stream-request-start-ms"] != nil || md["ws_request_header_x_openai_internal_codex_responses_lite"] != nil {
		t.Errorf("upstream client_metadata = %v", md)
	}
	if h.Get("X-Openai-Internal-Codex-Responses-Lite") != "true" || h.Get("Session-Id") != "th-1" || h.Get("Openai-Beta") != "" || h.Get("Sec-Websocket-Key") != "" || h.Get("Upgrade") != "" {
		t.Errorf("upstream headers = %v", h)
	}
	if h.Get("X-Codex-Turn-Metadata") != `{"request_kind":"turn"}` {
		t.Errorf("x-codex-turn-metadata = %q, want the frame's", h.Get("X-Codex-Turn-Metadata"))
	}
	wsSend(t, c, frameJSON("[]", "resp_1", `"client_metadata":{"x-codex-turn-state":"ts-42"}`))
	wsResponse(t, c)
	if _, h := u.request(t, 1); h.Get("X-Codex-Turn-State") != "ts-42" {
		t.Errorf("same turn: upstream x-codex-turn-state = %q", h.Get("X-Codex-Turn-State"))
	}
	wsSend(t, c, frameJSON("["+userMore+"]", "resp_2"))
	wsResponse(t, c)
	if _, h := u.request(t, 2); h.Get("X-Codex-Turn-State") != "" {
		t.Errorf("next turn: upstream x-codex-turn-state = %q, want none", h.Get("X-Codex-Turn-State"))
	}
}

// Scenario 13: pings every 100 ms while a response streams slowly do not
// disturb it; the upgrade is authenticated as the POST is (401 without a
// key when keys are configured, any key in Authorization, x-api-key).
func TestWSPingsAndAuth(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	u := &sseUpstream{reply: func(n int, _ []byte) upReply {
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "slow"), hold: hold, gone: make(chan struct{})}
	}}
	base, _ := wsServer(t, u, "keys: [{name: k1, key: sk-client}]\n")
	if _, resp, err := wsTryDial(base, "/v1/responses", false); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("no key: %v %v, want 401", err, resp)
	}
	c, _ := wsDial(t, base, "/v1/responses", "Authorization", "Bearer sk-client")
	pings := 0
	c.SetPingHandler(func(data string) error {
		pings++
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	time.AfterFunc(600*time.Millisecond, func() { close(hold) })
	if e := last(wsResponse(t, c)); e.Type != "response.completed" {
		t.Fatalf("slow response under pings: %s", e.Raw)
	}
	if pings < 3 {
		t.Errorf("%d pings in 600 ms, want at least 3", pings)
	}
	c2, _ := wsDial(t, base, "/v1/responses", "X-Api-Key", "sk-client")
	c2.Close()
	// A page on another site cannot open the socket with the browser's
	// credentials or a loopback trust: a foreign Origin is refused.
	if _, resp, err := wsTryDial(base, "/v1/responses", false, "X-Api-Key", "sk-client", "Origin", "http://evil.example"); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("foreign Origin: %v %v, want 403", err, resp)
	}
}

// Scenario 14: strict framing: every frame is one JSON object in a text
// frame, without an SSE prefix, and nothing follows response.completed.
func TestWSStrictFraming(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(int, []byte) upReply {
		// Trailing garbage after the terminal event must not go out.
		return upReply{body: textAnswer("resp_1", "ok") + "data: [DONE]\n\n" + sseEvents(`{"type":"response.output_text.delta","delta":"late"}`)}
	}}
	base, _ := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	evs := wsResponse(t, c)
	for _, e := range evs {
		if bytes.HasPrefix(e.Raw, []byte("event:")) || bytes.HasPrefix(e.Raw, []byte("data:")) || bytes.Count(e.Raw, []byte("\n")) > 0 {
			t.Errorf("frame is not bare JSON: %q", e.Raw)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if mt, b, err := c.ReadMessage(); err == nil {
		t.Fatalf("a frame (type %d) followed response.completed: %s", mt, b)
	}
}

// waitState waits until the transport's state bytes satisfy ok: the
// transcript is stored just after response.completed went out.
func waitState(t *testing.T, s *Server, ok func(int64) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(s.ws.StateBytes()) {
		if time.Now().After(deadline) {
			t.Fatalf("state bytes stay at %d", s.ws.StateBytes())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWSNoLeaks: after sockets that completed, failed upstream, were
// dropped mid-stream, sent an oversized frame or bad frames, every
// goroutine the transport started has ended and no state is held.
func TestWSNoLeaks(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	u := &sseUpstream{reply: func(n int, b []byte) upReply {
		switch {
		case bytes.Contains(b, []byte("fail-please")):
			return upReply{status: 503, body: `{"error":{"type":"server_error","code":"overloaded","message":"busy"}}`}
		case bytes.Contains(b, []byte("hold-please")):
			return upReply{body: textAnswer("resp_h", "never"), hold: hold, gone: make(chan struct{})}
		}
		return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")}
	}}
	base, s := wsServer(t, u, "limits: {max_body_bytes: 50000}\n")
	warm, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, warm, frameJSON("["+userHi+"]", ""))
	wsResponse(t, warm)
	warm.Close()
	waitConns(t, s, 0)
	time.Sleep(50 * time.Millisecond)
	baseline := runtimeGoroutines()

	for i := 0; i < 3; i++ {
		c, _ := wsDial(t, base, "/v1/responses")
		wsSend(t, c, frameJSON("["+userHi+"]", ""))
		wsResponse(t, c)
		wsSend(t, c, frameJSON(`[{"type":"message","role":"user","content":"fail-please"}]`, ""))
		wsResponse(t, c)
		wsSend(t, c, `{"type":"nope"}`)
		wsResponse(t, c)
		c.Close()

		d, _ := wsDial(t, base, "/v1/responses")
		wsSend(t, d, frameJSON(`[{"type":"message","role":"user","content":"hold-please"}]`, ""))
		_ = d.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := d.ReadMessage(); err != nil {
			t.Fatal(err)
		}
		d.NetConn().Close()

		e, _ := wsDial(t, base, "/v1/responses")
		_ = e.WriteMessage(websocket.TextMessage, []byte(frameJSON(`[{"type":"message","role":"user","content":"`+strings.Repeat("z", 60000)+`"}]`, "")))
		_ = e.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, _ = e.ReadMessage()
		e.Close()
	}
	waitConns(t, s, 0)
	deadline := time.Now().Add(10 * time.Second)
	for runtimeGoroutines() > baseline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtimeGoroutines(); g > baseline {
		t.Errorf("%d goroutines after the sockets closed, %d before", g, baseline)
	}
	if st := s.ws.Stats(); st.StateBytes != 0 {
		t.Errorf("state held after every socket closed: %+v", st)
	}
}

func waitConns(t *testing.T, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.ws.Conns() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d WebSocket connections open, want %d", s.ws.Conns(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runtimeGoroutines() int { return runtime.NumGoroutine() }

// TestWSReload: a configuration reload leaves open sockets open (their
// key is unchanged): the socket keeps serving, a frame chains on the
// response before the reload, and a new socket is served by the new
// configuration.
func TestWSReload(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply { return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")} }}
	base, s := wsServer(t, u, "")
	c, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	wsResponse(t, c)
	if err := s.Reload(s.Config()); err != nil {
		t.Fatal(err)
	}
	wsSend(t, c, frameJSON("["+userMore+"]", "resp_1"))
	if e := last(wsResponse(t, c)); e.Type != "response.completed" {
		t.Fatalf("chaining across a reload: %s", e.Raw)
	}
	if m, _ := u.request(t, 1); len(inputOf(t, m)) != 3 {
		t.Fatalf("the chained turn after a reload sent %d items, want 3", len(inputOf(t, m)))
	}
	c2, _ := wsDial(t, base, "/v1/responses")
	wsSend(t, c2, frameJSON("["+userHi+"]", ""))
	if e := last(wsResponse(t, c2)); e.Type != "response.completed" {
		t.Fatalf("after a reload: %s", e.Raw)
	}
}

// TestWSTaggedTokenInTranscript: a replay token another vendor signed
// (tagged by slipstream when it translated that turn) never reaches the
// Responses upstream: not in the turn whose frame carries it, and not in
// a later turn that carries it only through the transcript the
// connection keeps (the transport, not a pass over the body, says the
// body may hold a tag).
func TestWSTaggedTokenInTranscript(t *testing.T) {
	t.Parallel()
	u := &sseUpstream{reply: func(n int, _ []byte) upReply { return upReply{body: textAnswer(fmt.Sprintf("resp_%d", n), "ok")} }}
	up := newUpstream(t, u)
	yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"gpt-*\"]}\n" +
		"  - {name: a, kind: anthropic, base_url: \"${UP}\", keys: [k], models: [\"claude-*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(t, yml, up.URL)
	c, _ := wsDial(t, base, "/v1/responses")
	rs := `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"SsOrGemiR2VtaW5pU2ln"}`
	wsSend(t, c, frameJSON("["+userHi+","+rs+"]", ""))
	first := last(wsResponse(t, c)).Response.ID
	wsSend(t, c, frameJSON(`[{"type":"message","role":"user","content":"again"}]`, first))
	if e := last(wsResponse(t, c)); e.Response.ID != "resp_2" {
		t.Fatalf("second response: %s", e.Raw)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, b := range u.bodies {
		if strings.Contains(string(b), "R2VtaW5pU2ln") || strings.Contains(string(b), "SsOr") {
			t.Fatalf("upstream request %d holds the foreign token: %s", i+1, b)
		}
	}
	if len(u.bodies) != 2 || !strings.Contains(string(u.bodies[1]), `"again"`) {
		t.Fatalf("upstream requests: %q", u.bodies)
	}
}
