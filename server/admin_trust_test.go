package server

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// openFeed opens GET /admin/api/events with token and returns its reader
// past the hello comment.
func openFeed(t *testing.T, base, token string) (*bufio.Reader, io.Closer) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/admin/api/events", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); resp.StatusCode != 200 || line != ": hello\n" {
		t.Fatalf("feed: %d, first line %q", resp.StatusCode, line)
	}
	return br, resp.Body
}

// feedUntil reads br until it has read want or the feed ends, for at most
// 5 s, and returns what it read and whether the feed ended.
func feedUntil(br *bufio.Reader, body io.Closer, want string) (string, bool) {
	type result struct {
		got   string
		ended bool
	}
	done := make(chan result, 1)
	go func() {
		var b strings.Builder
		for {
			line, err := br.ReadString('\n')
			b.WriteString(line)
			if err != nil || strings.Contains(b.String(), want) {
				done <- result{b.String(), err != nil}
				return
			}
		}
	}()
	select {
	case r := <-done:
		return r.got, r.ended
	case <-time.After(5 * time.Second):
		body.Close()
		r := <-done
		return r.got, false
	}
}

// TestAdminFeedEndsWithItsToken: a feed is authorised when it opens; a
// reload that removes its admin token ends it, so a revoked operator
// stops seeing live requests, credentials and actions. A feed whose
// token stays keeps streaming.
func TestAdminFeedEndsWithItsToken(t *testing.T) {
	t.Parallel()
	const second = "adm-second-0123456789"
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := strings.ReplaceAll(strings.Replace(adminConfig, "    - {name: ops, token: "+adminToken+"}\n",
		"    - {name: ops, token: "+adminToken+"}\n    - {name: ci, token: "+second+"}\n", 1), "${UP}", up.URL)
	path := filepath.Join(t.TempDir(), "slipstream.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	base, s := serveAdminAt(t, parseConfig(t, yml, up.URL), "0.0.0.0:0", &logs)
	stop := make(chan struct{})
	defer close(stop)
	load := func() (*config.Config, error) { return config.LoadFile(path, config.Override{}) }
	if err := s.WatchConfig(path, load, stop); err != nil {
		t.Fatal(err)
	}
	revoked, revokedBody := openFeed(t, base, adminToken)
	kept, keptBody := openFeed(t, base, second)

	if err := os.WriteFile(path, []byte(strings.Replace(yml, "    - {name: ops, token: "+adminToken+"}\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if status, _, body := adminDo(t, base, "POST", "/admin/api/reload", second, ""); status != 200 {
		t.Fatalf("reload: %d %s", status, body)
	}
	if status, _, body := post(t, base+"/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[]}`, "x-api-key", adminClientKey); status != 200 {
		t.Fatalf("request: %d %s", status, body)
	}
	if got, ended := feedUntil(revoked, revokedBody, "event: live.start"); !ended || strings.Contains(got, "live.start") {
		t.Fatalf("the removed token's feed goes on after the reload (ended %v):\n%s", ended, got)
	}
	if got, ended := feedUntil(kept, keptBody, `"key":"dev"`); ended || !strings.Contains(got, `"key":"dev"`) {
		t.Fatalf("the kept token's feed (ended %v):\n%s", ended, got)
	}
	if !strings.Contains(logs.String(), "closing 1 management API feed(s)") {
		t.Fatalf("the revocation is not logged:\n%s", logs.String())
	}
}

// TestAdminTokenlessRefusesOtherHosts: without admin tokens on a loopback
// listener, the management API answers only requests addressed to a
// loopback name, even with allowed_hosts: ["*"]. A page whose DNS name
// was rebound to 127.0.0.1 sends its own name as Host and as Origin, which
// the same-origin check alone lets through.
func TestAdminTokenlessRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, &recorder{reply: anthropicReply})
	yml := `
keys:
  - {name: dev, key: ` + adminClientKey + `}
allowed_hosts: ["*"]
providers:
  - name: anth
    kind: anthropic
    base_url: ${UP}
    keys: [{name: ka, key: sk-up-a}]
    models: ["claude-*"]
`
	base, _ := serveAdminAt(t, parseConfig(t, yml, up.URL), "127.0.0.1:0", nil)
	port := base[strings.LastIndexByte(base, ':')+1:]
	page := "rebind.attacker.example:" + port
	for _, path := range []string{"/admin/api/status", "/admin/api/events"} {
		status, _, body := adminDo(t, base, "GET", path, "", "", "Host", page, "Origin", "http://"+page, "Sec-Fetch-Site", "same-origin")
		if status != 403 || !strings.Contains(body, "admin.tokens") {
			t.Fatalf("GET %s from a rebinding page: %d %s", path, status, body)
		}
	}
	status, _, body := adminDo(t, base, "POST", "/admin/api/credentials/disable", "", `{"provider":"anth","credential":"ka"}`,
		"Host", page, "Origin", "http://"+page, "Sec-Fetch-Site", "same-origin")
	if status != 403 {
		t.Fatalf("an action from a rebinding page: %d %s", status, body)
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		if status, _, body := adminDo(t, base, "GET", "/admin/api/status", "", "", "Host", host); status != 200 {
			t.Fatalf("Host %s: %d %s", host, status, body)
		}
	}
}
