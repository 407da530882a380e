package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tickingUpstream answers a stream with first, then tick every 50 ms
// (nothing when tick is empty) n times, then last. gone is closed when
// slipstream closes the connection before that.
func tickingUpstream(t *testing.T, first, tick string, n int, last string) (url string, gone chan struct{}) {
	gone = make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for i := 0; i < n; i++ {
			select {
			case <-r.Context().Done():
				close(gone)
				return
			case <-t.C:
				if tick != "" {
					_, _ = io.WriteString(w, tick)
					w.(http.Flusher).Flush()
				}
			}
		}
		_, _ = io.WriteString(w, last)
	}))
	return up.URL, gone
}

// TestIdleCountsDataEventsOnly: an upstream stream that sends no data
// event for timeouts.idle is ended with the dialect's error event and its
// connection closed, whether it is silent or sends keep-alive comments
// every 50 ms; on the same-dialect path and a translated one.
func TestIdleCountsDataEventsOnly(t *testing.T) {
	anthStart := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
	chatStart := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
	for _, tc := range []struct {
		name, kind, suffix, first string
		ping                      bool
		keepalive                 string // slipstream's own pings to the client
	}{
		{"same_dialect_pings", "kind: anthropic", "", anthStart, true, "0s"},
		{"translated_pings", "kind: openai, api: chat", "/v1", chatStart, true, "0s"},
		{"same_dialect_silent", "kind: anthropic", "", anthStart, false, "0s"},
		{"translated_pings_keepalive", "kind: openai, api: chat", "/v1", chatStart, true, "200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tick := ""
			if tc.ping {
				tick = ": ping\n\n"
			}
			url, gone := tickingUpstream(t, tc.first, tick, 200, "")
			base, _ := startServer(t, fmt.Sprintf("providers:\n  - {name: p, %s, base_url: %q, keys: [k], models: [m1]}\ntimeouts: {keepalive: %s, idle: 500ms}\n", tc.kind, url+tc.suffix, tc.keepalive), "")
			path, body := clientRequest(0, true)
			start := time.Now()
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Timeout: 8 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("the stream did not end (%v): %v\n%s", took, err, b)
			}
			if took > 4*time.Second || !strings.Contains(string(b), "event: error") || !strings.Contains(string(b), "timeouts.idle") {
				t.Fatalf("after %v: %d %s", took, resp.StatusCode, b)
			}
			select {
			case <-gone:
			case <-time.After(3 * time.Second):
				t.Fatal("the upstream connection was not closed")
			}
		})
	}
}

// TestIdleDataKeepsStreamAlive: a stream whose data events come closer
// together than timeouts.idle runs on past it, with keep-alives between.
func TestIdleDataKeepsStreamAlive(t *testing.T) {
	t.Parallel()
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m1\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	delta := ": ping\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n"
	end := "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	url, _ := tickingUpstream(t, start, delta, 30, end) // 1.5 s of deltas
	base, _ := startServer(t, fmt.Sprintf("providers:\n  - {name: p, kind: anthropic, base_url: %q, keys: [k], models: [m1]}\ntimeouts: {keepalive: 0s, idle: 500ms}\n", url), "")
	path, body := clientRequest(0, true)
	status, _, b := post(t, base+path, body)
	if status != 200 || strings.Contains(string(b), "event: error") || strings.Count(string(b), "event: content_block_delta") != 30 || !strings.HasSuffix(string(b), end) {
		t.Fatalf("%d %s", status, b)
	}
}
