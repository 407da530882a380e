package server

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// Output items over the state budget: an upstream streams outgrowItems
// response.output_item.done events of a 1 MiB message each in one turn
// and holds the response open. What the socket gathers for the transcript
// stops at limits.ws_state_bytes (1 MiB here), so the live heap grows by a
// few MiB while the turn runs, as over HTTP, not by what the items
// add up to (32 MiB). The transcript is not stored: a frame chaining on the
// response is answered previous_response_not_found, as one whose
// transcript was too large to keep. Not parallel: it measures the heap.
const (
	outgrowItems     = 32
	outgrowItemSize  = 1 << 20
	outgrowMaxGrowth = 12 << 20
)

func TestWSOutputOverStateBudget(t *testing.T) {
	up := &outgrowUpstream{hold: make(chan struct{}), item: outgrowItem()}
	released := false
	release := func() {
		if !released {
			released = true
			close(up.hold)
		}
	}
	defer release()
	yml := "providers:\n  - {name: up, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\n" +
		"timeouts: {keepalive: 0s, ws_ping: 100ms}\nlimits: {ws_state_bytes: 1MiB}\n"
	base, _ := startServer(t, yml, newUpstream(t, up).URL)
	c, _ := wsDial(t, base, "/v1/responses")
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))

	before := liveHeap()
	wsSend(t, c, frameJSON("["+userHi+"]", ""))
	for n := 0; n < outgrowItems; {
		switch e := wsRead(t, c); e.Type {
		case "response.output_item.done":
			n++
		case "response.completed", "response.failed", "error":
			t.Fatalf("the turn ended after %d items: %.300s", n, e.Raw)
		}
	}
	// Every item went out; the completion has not: the turn is open.
	during := liveHeap()
	growth := int64(during) - int64(before)
	t.Logf("live heap %.1f MiB before the turn, %.1f MiB with %d items of %d bytes relayed",
		float64(before)/(1<<20), float64(during)/(1<<20), outgrowItems, outgrowItemSize)
	if growth > outgrowMaxGrowth {
		t.Errorf("live heap grew by %.1f MiB while the turn ran, over %d MiB", float64(growth)/(1<<20), outgrowMaxGrowth>>20)
	}

	release()
	for {
		e := wsRead(t, c)
		if e.Type == "response.completed" {
			break
		}
		if e.Type == "response.failed" || e.Type == "error" {
			t.Fatalf("the turn ended with %.300s", e.Raw)
		}
	}
	wsSend(t, c, frameJSON("["+userMore+"]", "resp_big"))
	e := last(wsResponse(t, c))
	if e.Type != "error" || e.Status != 400 || e.Error.Code != "previous_response_not_found" {
		t.Fatalf("chaining on a response whose output is over the state budget: %.300s", e.Raw)
	}
	if n := up.n.Load(); n != 1 {
		t.Errorf("the upstream saw %d requests, want 1: the chained frame is answered locally", n)
	}
}

// wsRead reads one frame, checking it is a text frame holding one JSON
// object.
func wsRead(t *testing.T, c *websocket.Conn) wsEvent {
	t.Helper()
	mt, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if mt != websocket.TextMessage {
		t.Fatalf("frame of type %d, want text", mt)
	}
	var e wsEvent
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("frame is not one JSON object: %v: %.200q", err, b)
	}
	e.Raw = b
	return e
}

// liveHeap returns the bytes the live heap objects hold, after a
// collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// outgrowItem returns one message item of about outgrowItemSize bytes.
func outgrowItem() string {
	return `{"id":"msg_big","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` +
		strings.Repeat("x", outgrowItemSize) + `","annotations":[]}]}`
}

// outgrowUpstream answers a request with a Responses stream of
// outgrowItems output_item.done events each carrying item, then waits for
// hold to be closed before it completes response resp_big (with no
// output: the done events carried it).
type outgrowUpstream struct {
	hold chan struct{}
	item string
	n    atomic.Int32 // requests seen
}

func (u *outgrowUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	u.n.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	_, _ = io.WriteString(w, sseEvents(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_big","object":"response","status":"in_progress","output":[]}}`))
	for i := range outgrowItems {
		seq := strconv.Itoa(i + 1)
		_, _ = io.WriteString(w, "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"sequence_number\":"+seq+
			",\"output_index\":"+strconv.Itoa(i)+",\"item\":"+u.item+"}\n\n")
		w.(http.Flusher).Flush()
	}
	select {
	case <-u.hold:
	case <-r.Context().Done():
		return
	}
	_, _ = io.WriteString(w, sseEvents(`{"type":"response.completed","sequence_number":`+strconv.Itoa(outgrowItems+1)+
		`,"response":{"id":"resp_big","object":"response","status":"completed","output":[],"usage":{"input_tokens":11,"output_tokens":3,"total_tokens":14}}}`))
}
