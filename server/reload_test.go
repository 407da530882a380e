package server

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

const reloadConfig = `keys:
  - {name: alice, key: sk-alice-0123456789, rpm: 3}
providers:
  - {name: m, kind: mock, models: ["mock*"], reply: REPLY, chunks: 5, chunk_delay: 150ms}
`

func reloadCfg(t *testing.T, reply string) *config.Config {
	return parseConfig(t, strings.ReplaceAll(reloadConfig, "REPLY", reply), "")
}

// TestReloadKeepsStreamsAndState: a stream that started before a reload
// ends on the configuration it started with, whole; requests after it see
// the new configuration; an invalid configuration is refused and the old
// one keeps serving; a key's rpm window carries over.
func TestReloadKeepsStreamsAndState(t *testing.T) {
	t.Parallel()
	var logs testkit.Buffer
	base, s := serveConfigServer(t, reloadCfg(t, "old words here"), &logs)
	// The configuration comes from a watched file, edited as an editor
	// does (write beside, rename over).
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	write := func(reply string) {
		t.Helper()
		tmp := filepath.Join(dir, ".s.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(strings.ReplaceAll(reloadConfig, "REPLY", reply)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("old words here")
	stop := make(chan struct{})
	defer close(stop)
	if err := s.WatchConfig(path, func() (*config.Config, error) { return config.LoadFile(path, config.Override{}) }, stop); err != nil {
		t.Fatal(err)
	}
	auth := []string{"Authorization", "Bearer sk-alice-0123456789"}

	// A stream in flight: 5 text deltas 150 ms apart, longer than the
	// watcher takes to settle and reload.
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"mock","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(auth[0], auth[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the stream has begun
		t.Fatal(err)
	}

	write("new words")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "config reloaded from "+path) {
		if time.Now().After(deadline) {
			t.Fatalf("the edit was not picked up:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var rest strings.Builder
	for {
		line, err := br.ReadString('\n')
		rest.WriteString(line)
		if err != nil {
			break
		}
	}
	got := rest.String()
	if !strings.Contains(got, "message_stop") || !strings.Contains(got, `"text":"ere"`) || strings.Contains(got, "new") {
		t.Fatalf("the stream in flight did not end whole on its own config:\n%s", got)
	}

	// One request of alice's rpm 3 went; two more pass, then 429 — the
	// window survived the reload.
	body := `{"model":"mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	_, _, b := post(t, base+"/v1/messages", body, auth...)
	if !strings.Contains(string(b), "new words") {
		t.Fatalf("after the reload: %s", b)
	}
	post(t, base+"/v1/messages", body, auth...)
	if status, _, b := post(t, base+"/v1/messages", body, auth...); status != 429 {
		t.Fatalf("4th request in the minute: %d %s (the rpm window did not survive the reload)", status, b)
	}

	// An invalid config is refused; the current one keeps serving.
	bad := reloadCfg(t, "x")
	bad.Providers[0].Kind = "nonsense"
	if err := s.Reload(bad); err == nil || !strings.Contains(err.Error(), "providers[0].kind") {
		t.Fatalf("invalid config: %v", err)
	}
	if s.Config().Providers[0].Reply != "new words" {
		t.Fatalf("the invalid config replaced the running one")
	}
	m := scrape(t, base+"/metrics", "sk-alice-0123456789") // keys are configured: a client key may scrape
	if m[`slipstream_config_reloads_total{result="ok"}`] != 1 {
		t.Fatalf("reloads counted: %v", m[`slipstream_config_reloads_total{result="ok"}`])
	}
	// The replaced generation lets go of its resources once idle.
	deadline = time.Now().Add(3 * time.Second)
	for s.inflight.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still in flight", s.inflight.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
