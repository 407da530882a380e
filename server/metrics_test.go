package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
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

// TestMetricsNeedACredentialWithKeys: with client keys configured,
// /metrics shows every key's name and usage only to a scrape that sends
// metrics.token or a client key; without keys or token it stays open.
func TestMetricsNeedACredentialWithKeys(t *testing.T) {
	t.Parallel()
	f := func(yml string, want int, headers ...string) {
		t.Helper()
		base, _ := startServer(t, yml, "")
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%q %v: %d, want %d", yml, headers, resp.StatusCode, want)
		}
	}
	const mock = "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"
	keys := "keys:\n  - {name: alice, key: sk-alice-0123456789}\n" + mock
	f(keys, 401)
	f(keys, 401, "Authorization", "Bearer wrong")
	f(keys, 200, "Authorization", "Bearer sk-alice-0123456789")
	f(keys, 200, "X-Api-Key", "sk-alice-0123456789")
	token := keys + "metrics: {token: scrape-secret}\n"
	f(token, 401)
	f(token, 200, "Authorization", "Bearer scrape-secret")
	f(token, 200, "Authorization", "Bearer sk-alice-0123456789")
	f(mock+"metrics: {token: scrape-secret}\n", 401, "Authorization", "Bearer sk-alice-0123456789")
	f(mock+"metrics: {token: scrape-secret}\n", 200, "Authorization", "bearer scrape-secret")
	f(mock, 200)
}

// TestMetricsExposition: every family comes after one # HELP and one
// # TYPE line, its samples together; every counter's name ends in _total;
// every slipstream family has help text.
func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	yml := "keys:\n  - {name: alice, key: sk-alice-0123456789}\nproviders:\n  - {name: m, kind: mock, models: [\"*\"]}\n  - {name: o, kind: openai, base_url: \"http://127.0.0.1:1\", keys: [k], models: [\"gpt-*\"]}\n"
	base, _ := startServer(t, yml, "")
	post(t, base+"/v1/messages", `{"model":"mock-a","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key", "sk-alice-0123456789")
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer sk-alice-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if problems := checkExposition(string(b)); len(problems) > 0 {
		t.Fatalf("exposition problems:\n%s", strings.Join(problems, "\n"))
	}
	for _, want := range []string{"# TYPE slipstream_requests_total counter", "# TYPE slipstream_request_duration_seconds histogram", "# TYPE slipstream_panics_recovered_total counter", "# TYPE slipstream_provider_credentials gauge"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
}

// checkExposition lists what breaks the Prometheus text format's rules
// on metadata in s.
func checkExposition(s string) []string {
	var bad []string
	help, typ := map[string]string{}, map[string]string{}
	done := map[string]bool{}
	cur := ""
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			if _, dup := help[name]; dup {
				bad = append(bad, "second HELP for "+name)
			}
			help[name] = text
			if strings.HasPrefix(name, "slipstream_") && text == "" {
				bad = append(bad, "no help text for "+name)
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, kind, _ := strings.Cut(rest, " ")
			if _, dup := typ[name]; dup {
				bad = append(bad, "second TYPE for "+name)
			}
			if _, ok := help[name]; !ok {
				bad = append(bad, "TYPE before HELP for "+name)
			}
			typ[name] = kind
			if kind == "counter" && !strings.HasSuffix(name, "_total") {
				bad = append(bad, "counter without _total: "+name)
			}
			if cur != "" {
				done[cur] = true
			}
			cur = name
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		fam := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suf); ok && (typ[base] == "histogram" || typ[base] == "summary") {
				fam = base
			}
		}
		if fam != cur {
			bad = append(bad, "sample "+name+" outside its family's block (after "+cur+")")
		}
		if done[fam] {
			bad = append(bad, "family "+fam+" split")
		}
	}
	return bad
}

// TestOpenMetricsWarning: serving /metrics without a credential on a
// listener other hosts can reach logs a warning at start-up; on loopback,
// or with a token, it does not.
func TestOpenMetricsWarning(t *testing.T) {
	t.Parallel()
	f := func(addr, extra string, want bool) {
		t.Helper()
		wantStartupLine(t, addr, extra, "/metrics is open", want)
	}
	f("0.0.0.0:0", "", true)
	f("127.0.0.1:0", "", false)
	f("0.0.0.0:0", "metrics: {token: scrape-secret}\n", false)
}

// wantStartupLine checks whether what a server on addr with config extra
// logs at start holds line.
func wantStartupLine(t *testing.T, addr, extra, line string, want bool) {
	t.Helper()
	logs := startupLog(t, addr, extra)
	if got := strings.Contains(logs, line); got != want {
		t.Fatalf("%s %q: logged %q %v, want %v; log:\n%s", addr, extra, line, got, want, logs)
	}
}

// startupLog serves a mock config with extra on a listener at addr until
// it is ready, shuts it down, and returns what it logged.
func startupLog(t *testing.T, addr, extra string) string {
	t.Helper()
	cfg := parseConfig(t, "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"+extra, "")
	var logs testkit.Buffer
	s, err := New(cfg, Options{Log: &logs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	for deadline := time.Now().Add(5 * time.Second); !s.ready.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.Shutdown(ctx)
	<-done
	return logs.String()
}
