package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProxyStarts checks the harness itself: slipstream starts on the mock
// config, is ready, answers HEAD / and serves a plain curl-style request.
func TestProxyStarts(t *testing.T) {
	t.Parallel()
	p := startSlipstream(t, mockConfig("harness ok"))
	resp, err := http.Head(p.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HEAD /: status %d, want 200", resp.StatusCode)
	}
	req, _ := http.NewRequest("POST", p.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"mock-1","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "harness ok") {
		t.Fatalf("POST /v1/chat/completions: status %d body %s", resp.StatusCode, body)
	}
}
