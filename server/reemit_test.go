package server

import (
	"fmt"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// TestValidRelayed: an upstream event is relayed verbatim only when its
// data is one strictly valid JSON object (or Chat's [DONE]), its name a
// plain token, and its raw bytes hold only those fields and comments.
func TestValidRelayed(t *testing.T) {
	t.Parallel()
	f := func(d codec.Dialect, raw string, want bool) {
		t.Helper()
		var rd sse.Reader
		rd.Reset(strings.NewReader(raw))
		defer rd.Release()
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if got := validRelayed(d, &ev); got != want {
			t.Errorf("%v %q: valid %v, want %v", d, raw, got, want)
		}
	}
	an, chat, gem := codec.DialectAnthropic, codec.DialectChat, codec.DialectGemini
	f(an, fmt.Sprintf(anthEvent, 1), true)
	f(an, "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n", true)
	f(gem, "data: {\"candidates\":[]}\r\n\r\n", true)
	f(chat, "data: [DONE]\n\n", true)
	f(chat, "data: {\"a\":1}\n\n", true)
	f(chat, "data:{\"a\":1}\n\n", true)
	f(chat, "data: {\"a\":\ndata: 1}\n\n", true) // data lines joined with \n
	f(chat, ": ping\n\n", true)
	f(chat, ": OPENROUTER PROCESSING\n\n", true)
	f(an, "id: 7\nevent: ping\ndata: {\"type\":\"ping\"}\n\n", true)

	f(an, "data: [DONE]\n\n", false) // only Chat ends with [DONE]
	f(chat, "data: {\"\n\n", false)
	f(chat, "data: {\"a\":\"\xff\"}\n\n", false) // invalid UTF-8 in a string
	f(chat, "data: {\"a\":\"\x01\"}\n\n", false) // a control byte in a string
	f(chat, "data: [1,2]\n\n", false)            // not an object
	f(chat, "data: \n\n", false)
	f(an, "event: message_start\n\n", false) // a name without data
	f(an, "event: a b\ndata: {}\n\n", false)
	f(an, "event: \xff\ndata: {}\n\n", false)
	f(chat, "data: {}\n\x8f\x12garbage\n\n", false) // junk beside the data
	f(chat, "\x8f\x12garbage\n\n", false)           // junk alone
	f(chat, ": \xff\n\n", false)
}

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
