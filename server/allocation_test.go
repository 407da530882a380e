//go:build !race

package server

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestSameDialectHeapBudget: a same-dialect non-streamed request costs
// O(1) heap beyond its body, whatever the body's size; with guardrails
// on too, whether a rule redacts (the redacted body is a pooled buffer)
// or nothing matches.
func TestSameDialectHeapBudget(t *testing.T) {
	up := rawUpstream(t, httpReply("application/json", chatReply))
	yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	plain, _ := startServer(t, yml, up)
	guarded, _ := startServer(t, yml+"guardrails: {enabled: true}\n", up)
	secret := secretOf(t, "github_token")
	f := func(what, base string, size int, redact bool) {
		t.Helper()
		body := chatBody(size, false)
		if redact {
			body = bytes.Replace(body, []byte(`"content":"`), []byte(`"content":"token `+secret+` `), 1)
		}
		got := allocPerRequest(t, base, rawRequest("/v1/chat/completions", body))
		// Budget (docs/ARCHITECTURE.md, memory model): 64 KiB + 0.05 x body, and the figure must
		// not grow with the body.
		budget := uint64(64<<10) + uint64(len(body))/20
		t.Logf("%s, body %d bytes: %d bytes of heap per request (budget %d)", what, len(body), got, budget)
		if got > budget || got > 64<<10 {
			t.Fatalf("%s, body %d: %d bytes of heap per request, budget %d", what, len(body), got, budget)
		}
	}
	for _, size := range []int{10 << 10, 2 << 20} {
		f("plain", plain, size, false)
		f("guardrails, no match", guarded, size, false)
		f("guardrails, a redaction", guarded, size, true)
	}
}

// TestStreamedEventAllocs: once a stream runs, relaying one more event
// allocates nothing, with guardrails off and on (their relay step scans
// and restores every delta). Two streams that differ only in length must
// cost the same number of allocations.
func TestStreamedEventAllocs(t *testing.T) {
	for _, extra := range []string{"", "guardrails: {rules: {aws_access_key_id: {action: redact, restore: true}}}\n"} {
		streamedEventAllocs(t, extra)
	}
}

func streamedEventAllocs(t *testing.T, extra string) {
	streamOf := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
		for i := 0; i < n; i++ {
			b.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"}}]}\n\n")
		}
		b.WriteString("data: [DONE]\n\n")
		return b.Bytes()
	}
	mallocs := func(events int) uint64 {
		up := rawUpstream(t, httpReply("text/event-stream", string(streamOf(events))))
		yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n" + extra
		base, _ := startServer(t, yml, up)
		rc := dialRaw(t, base)
		req := rawRequest("/v1/chat/completions", chatBody(2000, true))
		for i := 0; i < 3; i++ {
			rc.do(t, req)
		}
		// No GC while measuring: a collection empties the pools, and the
		// refill would be counted against whichever stream was running.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		// Mallocs counts the whole process, where other tests' servers
		// may still be winding down: noise only adds, so the least of
		// three rounds is the stream's own count.
		least := ^uint64(0)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const n = 4
			for i := 0; i < n; i++ {
				if status, _ := rc.do(t, req); status != 200 {
					t.Fatalf("status %d", status)
				}
			}
			runtime.ReadMemStats(&after)
			least = min(least, (after.Mallocs-before.Mallocs)/n)
		}
		return least
	}
	short, long := mallocs(200), mallocs(2200)
	perEvent := float64(int64(long)-int64(short)) / 2000
	t.Logf("%sallocations per stream: %d (200 events), %d (2200 events): %.3f per event", extra, short, long, perEvent)
	if perEvent > 0.01 {
		t.Fatalf("%.3f allocations per streamed event, want 0", perEvent)
	}
}

// TestKeepaliveCostsNothing: with keep-alive pings on (the default), a
// streamed request whose upstream answers within the interval allocates
// no more than with them off: the call runs on the request's goroutine
// and the pings are ticks of its wait (no goroutine, timer or channel).
func TestKeepaliveCostsNothing(t *testing.T) {
	reply := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok\"}}]}\n\ndata: [DONE]\n\n"
	up := rawUpstream(t, httpReply("text/event-stream", reply))
	yml := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: %s}\n"
	off, _ := startServer(t, fmt.Sprintf(yml, "0s"), up)
	on, _ := startServer(t, fmt.Sprintf(yml, "15s"), up)
	req := rawRequest("/v1/chat/completions", chatBody(2000, true))
	a, b := mallocsPerRequest(t, off, req), mallocsPerRequest(t, on, req)
	t.Logf("allocations per streamed request: %.2f with keep-alive off, %.2f on", a, b)
	if b-a >= 0.5 {
		t.Fatalf("keep-alive costs %.2f allocations per streamed request, want 0", b-a)
	}
}
