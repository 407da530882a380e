package server

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWorkersLeaveAfterABurst: the goroutines that served a burst of
// requests exit within a couple of seconds of its end (fasthttp keeps an
// idle worker ten by default), so their stacks, 8 KiB each after a
// stream, go back soon after the clients leave.
func TestWorkersLeaveAfterABurst(t *testing.T) {
	const n = 40
	var inFlight sync.WaitGroup
	inFlight.Add(n)
	release := make(chan struct{})
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		inFlight.Done()
		<-release // every request holds its worker until all n are in
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(t, yml, up.URL)
	before := runtime.NumGoroutine()
	var done sync.WaitGroup
	for range n {
		done.Add(1)
		go func() {
			defer done.Done()
			resp, err := http.Post(base+"/v1/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("status %d: %s", resp.StatusCode, body)
			}
		}()
	}
	all := make(chan struct{})
	go func() { inFlight.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatalf("the %d requests of the burst never were at the upstream together", n)
	}
	busy := runtime.NumGoroutine()
	close(release)
	done.Wait()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(4 * time.Second)
	for runtime.NumGoroutine() > before+n/4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before+n/4 {
		t.Fatalf("%d goroutines 4 s after a burst of %d requests (%d during it, %d before): its workers stayed", g, n, busy, before)
	}
}
