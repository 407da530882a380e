package server

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// countBody is an Anthropic count_tokens body of about size bytes of text.
func countBody(size int) string {
	return `{"model":"claude-x","messages":[{"role":"user","content":"` + strings.Repeat("count these words ", size/18) + `"}]}`
}

// TestCountTokensMeetsRPM: six parallel large count requests on a key
// with rpm: 2 get two counts and four 429s with Retry-After, and only two
// bodies are tokenized. Before, count requests met no limit: all six were
// counted (a 58 MB count costs about a second of CPU).
func TestCountTokensMeetsRPM(t *testing.T) {
	// Serial: localCounts is process-wide.
	yml := "keys:\n  - {name: ci, key: sk-client, rpm: 2}\nproviders:\n  - {name: m, kind: mock, models: [\"*\"]}\nlimits: {max_bytes_in_flight: 256MiB}\n"
	base, s := startServer(t, yml, "")
	body := countBody(4 << 20)
	before := localCounts.Load()
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	retry := make([]string, 6)
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var h http.Header
			statuses[i], h, _ = post(t, base+"/v1/messages/count_tokens", body, "X-Api-Key", "sk-client")
			retry[i] = h.Get("Retry-After")
		}(i)
	}
	wg.Wait()
	ok, refused := 0, 0
	for i, st := range statuses {
		switch {
		case st == 200:
			ok++
		case st == 429 && retry[i] != "":
			refused++
		default:
			t.Fatalf("count %d: %d (retry-after %q)", i, st, retry[i])
		}
	}
	waitIdle(t, s)
	if counted := localCounts.Load() - before; ok != 2 || refused != 4 || counted != 2 {
		t.Fatalf("6 counts on rpm: 2: %d answered, %d refused, %d bodies tokenized; want 2, 4, 2", ok, refused, counted)
	}
}

// TestCountTokensRPMEveryDialect: the count endpoint of each dialect
// takes an rpm slot and is refused in its dialect's shape when none is
// left; a key with count_tokens_exempt counts freely and keeps its rpm
// for generation.
func TestCountTokensRPMEveryDialect(t *testing.T) {
	t.Parallel()
	counts := []struct{ dialect, path, body string }{
		{"anthropic", "/v1/messages/count_tokens", `{"model":"m1","messages":[{"role":"user","content":"hello"}]}`},
		{"openai", "/v1/responses/input_tokens", `{"model":"m1","input":"hello"}`},
		{"gemini", "/v1beta/models/m1:countTokens", `{"contents":[{"role":"user","parts":[{"text":"hello"}]}]}`},
	}
	const providers = "providers:\n  - {name: m, kind: mock, models: [\"*\"]}\n"
	for _, c := range counts {
		t.Run(c.dialect, func(t *testing.T) {
			base, _ := startServer(t, "keys:\n  - {name: ci, key: sk-client, rpm: 1}\n"+providers, "")
			if status, _, b := post(t, base+c.path, c.body, "X-Goog-Api-Key", "sk-client"); status != 200 {
				t.Fatalf("first count: %d %s", status, b)
			}
			status, h, b := post(t, base+c.path, c.body, "X-Goog-Api-Key", "sk-client")
			if status != 429 || h.Get("Retry-After") == "" || !strings.Contains(string(b), "rpm") {
				t.Fatalf("second count on rpm: 1: %d retry-after %q %s", status, h.Get("Retry-After"), b)
			}
			checkShape(t, c.dialect, b)
		})
	}
	t.Run("exempt", func(t *testing.T) {
		base, _ := startServer(t, "keys:\n  - {name: ci, key: sk-client, rpm: 1, count_tokens_exempt: true}\n"+providers, "")
		for i := 0; i < 3; i++ {
			for _, c := range counts {
				if status, _, b := post(t, base+c.path, c.body, "X-Goog-Api-Key", "sk-client"); status != 200 {
					t.Fatalf("exempt count %d on %s: %d %s", i+1, c.path, status, b)
				}
			}
		}
		gen := `{"model":"m1","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
		if status, _, b := post(t, base+"/v1/messages", gen, "X-Api-Key", "sk-client"); status != 200 {
			t.Fatalf("generation after exempt counts: %d %s", status, b)
		}
		if status, _, _ := post(t, base+"/v1/messages", gen, "X-Api-Key", "sk-client"); status != 429 {
			t.Fatalf("second generation on rpm: 1: %d", status)
		}
	})
}

// TestCountTokensBodyMeetsBytesInFlight: a count request's body is
// admitted against limits.max_bytes_in_flight like any POST: while a held
// answer takes the budget, a count gets 429 and nothing is tokenized.
func TestCountTokensBodyMeetsBytesInFlight(t *testing.T) {
	// Serial: localCounts is process-wide.
	const size = 12 << 20
	reply := `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("a", size) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	up := rawUpstream(t, httpReply("application/json", reply))
	cfg := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\nlimits: {max_bytes_in_flight: 1MiB}\n"
	base, s := startServer(t, cfg, up)
	slow := dialSlowReader(t, base)
	if _, err := slow.Write(rawRequest("/v1/chat/completions", []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for s.bytesInFlight.Load() < size {
		if time.Now().After(deadline) {
			t.Fatalf("the held answer counts %d bytes in flight", s.bytesInFlight.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := localCounts.Load()
	status, _, b := post(t, base+"/v1/messages/count_tokens", countBody(64<<10))
	if status != http.StatusTooManyRequests || !strings.Contains(string(b), "max_bytes_in_flight") {
		t.Fatalf("a count beside the held answer: %d %.200s, want 429", status, b)
	}
	if n := localCounts.Load() - before; n != 0 {
		t.Fatalf("%d counts ran while refused", n)
	}
	slow.Close()
	waitIdle(t, s)
	if status, _, b := post(t, base+"/v1/messages/count_tokens", countBody(64<<10)); status != 200 {
		t.Fatalf("the count once the answer is gone: %d %.200s", status, b)
	}
}
