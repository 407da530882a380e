package server

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
)

// TestAccessLogEveryRequest: refused requests (401, 404) get a line too,
// each with the id the response carries; a failed upstream call logs its
// cause class; no secret reaches the log.
func TestAccessLogEveryRequest(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there: connection refused
	yml := `keys:
  - {name: alice, key: sk-alice-0123456789}
providers:
  - {name: gone, kind: anthropic, base_url: "` + dead + `", keys: [{key: sk-up-secret-42, name: main}], models: ["claude-*"]}
timeouts: {keepalive: 0s}
log: {access: true, format: json}
`
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml, ""), &logs)
	body := `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	f := func(path string, headers []string, status int, want map[string]any) {
		t.Helper()
		got, h, b := post(t, base+path, body, headers...)
		if got != status {
			t.Fatalf("%s: status %d, want %d: %s", path, got, status, b)
		}
		line := waitLogLine(t, &logs, h.Get(requestIDHeader))
		for k, v := range want {
			if line[k] != v {
				t.Fatalf("%s: %s=%v, want %v: %v", path, k, line[k], v, line)
			}
		}
	}
	f("/v1/messages", []string{"x-api-key", "sk-wrong"}, 401, map[string]any{"status": 401.0, "route": "/v1/messages", "key": ""})
	f("/v1/nope", []string{"x-api-key", "sk-alice-0123456789"}, 404, map[string]any{"status": 404.0, "route": "other"})
	f("/v1/messages", []string{"x-api-key", "sk-alice-0123456789"}, 502, map[string]any{"status": 502.0, "key": "alice", "provider": "gone", "credential": "main", "cause": "refused", "model": "claude-x"})
	if l := logs.String(); strings.Contains(l, "sk-up-secret-42") || strings.Contains(l, "sk-alice-0123456789") || strings.Contains(l, "sk-wrong") {
		t.Fatalf("a secret reached the log:\n%s", l)
	}
}

// TestTTFTIgnoresPings: keep-alive pings sent while the upstream is
// silent are not the first token: ttft counts to the first real event.
func TestTTFTIgnoresPings(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		time.Sleep(300 * time.Millisecond) // silent: slipstream pings meanwhile
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	yml := "providers:\n  - {name: a, kind: anthropic, base_url: \"${UP}\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 50ms}\nlog: {access: true, format: json}\n"
	var logs testkit.Buffer
	base := serveConfig(t, parseConfig(t, yml, up.URL), &logs)
	status, h, got := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 || !strings.Contains(string(got), ": ping") {
		t.Fatalf("status %d, want a pinged stream: %s", status, got)
	}
	line := waitLogLine(t, &logs, h.Get(requestIDHeader))
	if ttft := line["ttft_ms"].(float64); ttft < 250 {
		t.Fatalf("ttft %v ms: the first ping was taken for the first token (%v)", ttft, line)
	}
	if line["input_tokens"] != 3.0 {
		t.Fatalf("usage after pings: %v", line)
	}
}
