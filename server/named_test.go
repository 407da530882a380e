package server

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"slipstream/codec/anthropic"
)

// TestUpstreamFailuresNameTheProvider: every error slipstream writes for a
// failed upstream answer (a 502 before the head, or the in-band error of
// a stream) names the provider, on both paths.
func TestUpstreamFailuresNameTheProvider(t *testing.T) {
	t.Parallel()
	const (
		jsonCut   = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
		jsonClose = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
		sseClose  = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
	)
	f := func(name, path, body, head, partial, want string) {
		t.Helper()
		up := cutUpstream(t, head, partial)
		base, _ := startServer(t, upConfig, up)
		status, _, got := post(t, base+path, body)
		if !strings.Contains(string(got), want) {
			t.Errorf("%s: status %d, %q does not name %q", name, status, got, want)
		}
	}
	anth := `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	anthStream := `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"stream":true}`
	toChat := `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	toChatStream := `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"stream":true}`
	toGem := `{"model":"gemini-x","messages":[{"role":"user","content":"hi"}]}`
	toGemStream := `{"model":"gemini-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"stream":true}`
	chunk := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":null}]}\n\n"

	f("same body cut", "/v1/messages", anth, jsonCut, `{"id":"msg_1","type":"mess`, "provider anth")
	f("same stream truncated", "/v1/messages", anthStream, sseClose, anthStart, "provider anth")
	f("same stream malformed", "/v1/messages", anthStream, sseClose, anthStart+"event: x\ndata: {\"\n\n", "provider anth")
	f("translated body cut", "/v1/messages", toChat, jsonCut, `{"id":"c`, "provider chat")
	f("translated body malformed", "/v1/messages", toChat, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n", "nonsense", "provider chat")
	f("translated body decodes to an error", "/v1/chat/completions", toGem, jsonClose, "", "provider gem")
	f("translated stream truncated", "/v1/messages", toChatStream, sseClose, chunk, "provider chat")
	f("translated stream malformed", "/v1/messages", toChatStream, sseClose, chunk+"data: {\"\n\n", "provider chat")
	f("translated stream without finish", "/v1/chat/completions", toGemStream, sseClose, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"x\"}]},\"index\":0}]}\n\n", "provider gem")
}

const anthStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"

// TestNotAStreamNamesTheProvider: a streamed request whose upstream
// answers, after keep-alive pings went out, with a body that is no event
// stream ends with an in-band error that names the provider.
func TestNotAStreamNamesTheProvider(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond) // pings go out meanwhile
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("hello"))
	}))
	base, _ := startServer(t, strings.Replace(upConfig, "keepalive: 0s", "keepalive: 30ms", 1), up.URL)
	_, _, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`)
	if !strings.Contains(string(got), "provider anth") {
		t.Errorf("%q does not name the provider", got)
	}
}

// TestPoolFull503HasRetryAfter: a full upstream connection pool is a 503
// the client may retry, and says when.
func TestPoolFull503HasRetryAfter(t *testing.T) {
	t.Parallel()
	base, body := fillUpstreamPool(t)
	status, hdr, got := post(t, base+"/v1/chat/completions", body)
	if status != 503 || hdr.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q: %s", status, hdr.Get("Retry-After"), got)
	}
}

// TestProviderNameEscapedInErrors: a provider name is free text; in an
// error message it is escaped, so the error stays valid JSON.
func TestProviderNameEscapedInErrors(t *testing.T) {
	t.Parallel()
	up := cutUpstream(t, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n", anthStart)
	yml := strings.Replace(strings.Replace(upConfig, "{name: anth,", `{name: "an\"th\\",`, 1), "sonnet: anth/", "sonnet: chat/", 1)
	base, _ := startServer(t, yml, up)
	_, _, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`)
	if err := anthropic.CheckStream(got); err != nil || !strings.Contains(string(got), `provider an\"th\\: `) {
		t.Fatalf("%v: %q", err, got)
	}
}

// TestUpstream5xxNamesTheProvider: an upstream's own 5xx, rewritten into
// another dialect's error (before the head, or in-band after keep-alive
// pings), names the provider too.
func TestUpstream5xxNamesTheProvider(t *testing.T) {
	t.Parallel()
	body := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	head := "HTTP/1.1 529 Overloaded\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	f := func(keepalive, req string) {
		t.Helper()
		up := cutUpstream(t, head, body)
		base, _ := startServer(t, strings.Replace(upConfig, "keepalive: 0s", "keepalive: "+keepalive, 1), up)
		status, _, got := post(t, base+"/v1/chat/completions", req)
		if !strings.Contains(string(got), "provider anth: Overloaded") {
			t.Errorf("keepalive %s: status %d: %q", keepalive, status, got)
		}
	}
	f("0s", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`)
	f("0s", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	f("1ms", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}],"stream":true}`)
}
