package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestMetricsCountRequests: after a scripted run, /metrics shows exactly
// the requests made, by route, dialect, provider, bounded model label and
// status, refused ones included; model names no configuration lists are
// counted as "other"; the bearer token guards the page when set.
func TestMetricsCountRequests(t *testing.T) {
	yml := `keys:
  - {name: alice, key: sk-alice-0123456789, models: ["mock-*", "exact-model"]}
providers:
  - {name: m, kind: mock, models: ["mock-*", "exact-model", "other-*"]}
metrics: {token: scrape-secret}
`
	base, _ := startServer(t, yml, "")
	auth := []string{"Authorization", "Bearer sk-alice-0123456789"}
	send := func(n int, path, body string, headers []string, want int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if status, _, got := post(t, base+path, body, headers...); status != want {
				t.Fatalf("%s: status %d, want %d: %s", path, status, want, got)
			}
		}
	}
	send(5, "/v1/messages", `{"model":"mock-a","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, auth, 200)
	send(2, "/v1/messages", `{"model":"mock-b","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, auth, 200)
	send(3, "/v1/chat/completions", `{"model":"exact-model","messages":[{"role":"user","content":"hi"}]}`, auth, 200)
	send(4, "/v1/chat/completions", `{"model":"mock-a","messages":[{"role":"user","content":"hi"}]}`, []string{"Authorization", "Bearer wrong"}, 401)
	send(1, "/v1/chat/completions", `{"model":"other-x","messages":[{"role":"user","content":"hi"}]}`, auth, 403)
	send(2, "/v1/nothing", `{}`, auth, 404)

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("/metrics without the token: %d, want 401", resp.StatusCode)
	}
	m := scrape(t, base+"/metrics", "scrape-secret")
	f := func(series string, want float64) {
		t.Helper()
		if got := m[series]; got != want {
			var have []string
			for k := range m {
				if strings.HasPrefix(k, "slipstream_requests_total") {
					have = append(have, k)
				}
			}
			t.Fatalf("%s = %v, want %v; series:\n%s", series, got, want, strings.Join(have, "\n"))
		}
	}
	f(`slipstream_requests_total{route="/v1/messages",dialect="anthropic",provider="m",model="mock-*",status="200"}`, 7)
	f(`slipstream_requests_total{route="/v1/chat/completions",dialect="openai-chat",provider="m",model="exact-model",status="200"}`, 3)
	f(`slipstream_requests_total{route="/v1/chat/completions",dialect="openai-chat",provider="",model="",status="401"}`, 4)
	f(`slipstream_requests_total{route="/v1/chat/completions",dialect="openai-chat",provider="",model="other-*",status="403"}`, 1)
	f(`slipstream_requests_total{route="other",dialect="openai-chat",provider="",model="",status="404"}`, 2)
	if got := sumFamily(m, "slipstream_requests_total"); got != 17 {
		t.Fatalf("requests total %v, want 17", got)
	}
	if got := m[`slipstream_request_duration_seconds_count{route="/v1/messages",provider="m"}`]; got != 7 {
		t.Fatalf("latency histogram count %v, want 7", got)
	}
	if got := m[`slipstream_time_to_first_token_seconds_count{route="/v1/messages",provider="m"}`]; got != 2 {
		t.Fatalf("ttft histogram count %v, want 2 (the streams)", got)
	}
	if _, ok := m["slipstream_websocket_upgrades_total"]; !ok {
		t.Fatal("no WebSocket counters")
	}
	if m[`slipstream_upstream_max_conns{provider="m"}`] != 0 {
		t.Fatal("a mock has no upstream pool")
	}
	if m[`slipstream_key_tokens_total{key="alice",kind="output"}`] == 0 || m["go_goroutines"] == 0 || m["slipstream_requests_in_flight"] != 0 {
		t.Fatalf("missing key tokens, runtime or in-flight series")
	}
}
