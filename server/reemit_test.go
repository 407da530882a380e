package server

import (
	"fmt"
	"testing"
)

// TestGarbageStreamEndsWithError: an upstream event that is not valid is
// never relayed; the stream ends with the dialect's error event after the
// good events before it.
func TestGarbageStreamEndsWithError(t *testing.T) {
	t.Parallel()
	f := func(path, body, good, bad, wantTail string) {
		t.Helper()
		rec := &recorder{reply: good + bad, contentType: "text/event-stream"}
		up := newUpstream(t, rec)
		base, _ := startServer(t, sameConfig, up.URL)
		status, _, got := post(t, base+path, body)
		if status != 200 || string(got) != good+wantTail {
			t.Fatalf("%s: status %d, got %q", path, status, got)
		}
	}
	f("/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`,
		fmt.Sprintf(anthEvent, 1), "event: content_block_delta\ndata: {\"type\":\"content_block_delt\x8f\x12\n\n"+fmt.Sprintf(anthEvent, 2),
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"provider anth: the upstream sent a malformed event\"}}\n\n")
	f("/v1/chat/completions", `{"model":"gpt-4o","messages":[],"stream":true}`,
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n", "\x00\x8fgarbage\n\ndata: [DONE]\n\n",
		"data: {\"error\":{\"message\":\"provider chat: the upstream sent a malformed event\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n")
}
