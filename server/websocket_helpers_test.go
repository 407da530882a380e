package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// sseUpstream is an in-test Responses upstream: each POST is recorded and
// answered by reply (status, headers, SSE or JSON body).
type sseUpstream struct {
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	reply  func(n int, body []byte) upReply
}

type upReply struct {
	status int
	header map[string]string
	body   string
	hold   chan struct{} // when set, the reply sends deltas after its first event until hold is closed
	gone   chan struct{} // closed when the client of a held reply went away
}

func (u *sseUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, b)
	u.heads = append(u.heads, r.Header.Clone())
	n := len(u.bodies)
	u.mu.Unlock()
	a := u.reply(n, b)
	ct := "text/event-stream"
	if a.status != 0 && a.status != 200 || strings.HasPrefix(a.body, "{") {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	if a.status == 0 {
		a.status = 200
	}
	w.WriteHeader(a.status)
	if a.hold == nil {
		_, _ = io.WriteString(w, a.body)
		return
	}
	first, rest, _ := strings.Cut(a.body, "\n\n")
	_, _ = io.WriteString(w, first+"\n\n")
	w.(http.Flusher).Flush()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-a.hold:
			_, _ = io.WriteString(w, rest)
			return
		case <-r.Context().Done():
			close(a.gone)
			return
		case <-tick.C:
			_, _ = io.WriteString(w, sseEvents(`{"type":"response.output_text.delta","delta":"."}`))
			w.(http.Flusher).Flush()
		}
	}
}

// request returns the i-th (0-based) request body decoded, and its headers.
func (u *sseUpstream) request(t *testing.T, i int) (map[string]any, http.Header) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if i >= len(u.bodies) {
		t.Fatalf("upstream saw %d requests, want at least %d", len(u.bodies), i+1)
	}
	var m map[string]any
	if err := json.Unmarshal(u.bodies[i], &m); err != nil {
		t.Fatalf("upstream body %d is not JSON: %v\n%s", i, err, u.bodies[i])
	}
	return m, u.heads[i]
}

func (u *sseUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

// sseEvents joins Responses events (JSON objects) into an SSE stream with
// event: lines.
func sseEvents(evs ...string) string {
	var b strings.Builder
	for _, e := range evs {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
	return b.String()
}

// textAnswer is a complete Responses stream answering text, with id.
func textAnswer(id, text string) string {
	item := `{"id":"msg_` + id + `","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + jsq(text) + `,"annotations":[]}]}`
	return sseEvents(
		`{"type":"response.created","sequence_number":0,"response":{"id":"`+id+`","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_`+id+`","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_`+id+`","output_index":0,"content_index":0,"delta":`+jsq(text)+`}`,
		`{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":`+item+`}`,
		`{"type":"response.completed","sequence_number":4,"response":{"id":"`+id+`","object":"response","status":"completed","output":[`+item+`],"usage":{"input_tokens":11,"output_tokens":3,"total_tokens":14}}}`,
	)
}

// callAnswer is a complete Responses stream whose output is one tool call
// item (a function_call or custom_tool_call object).
func callAnswer(id, item string) string {
	return sseEvents(
		`{"type":"response.created","sequence_number":0,"response":{"id":"`+id+`","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":`+item+`}`,
		`{"type":"response.completed","sequence_number":2,"response":{"id":"`+id+`","object":"response","status":"completed","output":[`+item+`],"usage":{"input_tokens":11,"output_tokens":3,"total_tokens":14}}}`,
	)
}

func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// wsServer starts slipstream with one Responses provider in front of u;
// extra is YAML appended to the config.
func wsServer(t *testing.T, u *sseUpstream, extra string) (string, *Server) {
	t.Helper()
	up := newUpstream(t, u)
	yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s, ws_ping: 100ms}\n" + extra
	return startServer(t, yml, up.URL)
}

// wsDial opens a WebSocket to base+path with headers (name, value pairs).
func wsDial(t *testing.T, base, path string, headers ...string) (*websocket.Conn, *http.Response) {
	t.Helper()
	c, resp, err := wsTryDial(base, path, false, headers...)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	t.Cleanup(func() { c.Close() })
	return c, resp
}

func wsTryDial(base, path string, compress bool, headers ...string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, EnableCompression: compress}
	return d.Dial("ws"+strings.TrimPrefix(base, "http")+path, h)
}

// wsSend sends one frame (a JSON object as text).
func wsSend(t *testing.T, c *websocket.Conn, frame string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatalf("write frame: %v", err)
	}
}

// wsEvent is one received frame.
type wsEvent struct {
	Raw    []byte
	Type   string `json:"type"`
	Status int    `json:"status"`
	Error  struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Response struct {
		ID     string            `json:"id"`
		Output []json.RawMessage `json:"output"`
	} `json:"response"`
	Headers map[string]string `json:"headers"`
}

// wsResponse reads frames until response.completed, response.failed or an
// error event, checking each is one text frame holding one JSON object.
func wsResponse(t *testing.T, c *websocket.Conn) []wsEvent {
	t.Helper()
	var evs []wsEvent
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		mt, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read after %d events: %v", len(evs), err)
		}
		if mt != websocket.TextMessage {
			t.Fatalf("frame of type %d, want text", mt)
		}
		var e wsEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("frame is not one JSON object: %v: %q", err, b)
		}
		e.Raw = b
		evs = append(evs, e)
		switch e.Type {
		case "response.completed", "response.failed", "error":
			return evs
		}
	}
}

func last(evs []wsEvent) wsEvent { return evs[len(evs)-1] }

// inputOf returns the input items of an upstream request, each re-encoded
// compactly.
func inputOf(t *testing.T, m map[string]any) []string {
	t.Helper()
	items, _ := m["input"].([]any)
	var out []string
	for _, it := range items {
		b, _ := json.Marshal(it)
		out = append(out, string(b))
	}
	return out
}

// frame builds a response.create frame: input is a raw JSON array; prev
// the previous_response_id or "".
func frameJSON(input, prev string, extra ...string) string {
	f := `{"type":"response.create","model":"gpt-t","stream":true,"tool_choice":"auto","store":false,"input":` + input
	if prev != "" {
		f += `,"previous_response_id":` + jsq(prev)
	}
	for _, e := range extra {
		f += "," + e
	}
	return f + "}"
}
