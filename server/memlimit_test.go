package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
)

// TestDerivedBytesInFlightCapAnswers429 is the memory bound by default:
// with GOMEMLIMIT set (debug.SetMemoryLimit is where the runtime keeps it)
// and no limits.max_bytes_in_flight, the cap is derived from the limit,
// and a burst past it gets 429 in each client's dialect instead of growing
// the heap past the limit.
func TestDerivedBytesInFlightCapAnswers429(t *testing.T) {
	old := debug.SetMemoryLimit(64 << 20)
	defer debug.SetMemoryLimit(old)
	base, s := startServer(t, "providers:\n  - {name: mock, kind: mock, models: [\"*\"]}\n", "")
	const cap, body = 16 << 20, 9 << 20
	if got := s.Config().Limits.MaxBytesInFlight.N(); got != cap {
		t.Fatalf("derived max_bytes_in_flight = %d, want %d", got, cap)
	}
	// One request holds 9 MiB of the budget: its head and the first 16 KiB
	// of its body are sent (fasthttp reads 8 KiB before calling the
	// handler), the rest is not.
	hold := rawhttp.Dial(t, base)
	defer hold.Close()
	fmt.Fprintf(hold, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"%s", body, strings.Repeat("a", 16<<10))

	pad := strings.Repeat("a", body)
	f := func(path, req, wantShape string) {
		t.Helper()
		b := []byte(strings.Replace(req, "PAD", pad[:body-len(req)+3], 1))
		deadline := time.Now().Add(5 * time.Second)
		for {
			resp, err := http.Post(base+path, "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				if !strings.Contains(string(got), wantShape) || !strings.Contains(string(got), "max_bytes_in_flight") {
					t.Fatalf("%s: 429 body %s lacks %q", path, got, wantShape)
				}
				return
			}
			if time.Now().After(deadline) { // the held request was never admitted?
				t.Fatalf("%s: %d %.200s, want 429", path, resp.StatusCode, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	f("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"PAD"}]}`, `{"error":{`)
	f("/v1/responses", `{"model":"m","input":"PAD"}`, `{"error":{`)
	f("/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"PAD"}]}`, `"type":"error"`)
	f("/v1beta/models/m:generateContent", `{"contents":[{"parts":[{"text":"PAD"}]}]}`, `"code":429`)

	// Once the held request goes away, a body of the same size is served.
	hold.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"`+pad[:body-100]+`"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the held request left: %d, want 200", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHeldAnswersCountInBytesInFlight: a whole upstream answer that
// slipstream keeps in memory until its client has read it (a same-dialect
// body read to be checked, a translated one) counts in the bytes in
// flight, so a client that reads slowly cannot pile answers up past
// limits.max_bytes_in_flight: meanwhile a new request gets 429. Before,
// only request bodies counted, and a translated answer left admission
// before its client had read it.
func TestHeldAnswersCountInBytesInFlight(t *testing.T) {
	t.Parallel()
	const size = 12 << 20
	reply := `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("a", size) + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	up := rawUpstream(t, httpReply("application/json", reply))
	cfg := "providers:\n  - {name: chat, kind: openai, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\nlimits: {max_bytes_in_flight: 1MiB}\n"
	for _, c := range []struct{ name, path, body string }{
		{"same_dialect", "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`},
		{"translated", "/v1/messages", `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, s := startServer(t, cfg, up)
			slow := dialSlowReader(t, base)
			if _, err := slow.Write(rawRequest(c.path, []byte(c.body))); err != nil {
				t.Fatal(err)
			}
			// Generous: under -race, reading and translating 12 MB takes seconds.
			deadline := time.Now().Add(60 * time.Second)
			for s.bytesInFlight.Load() < size {
				if time.Now().After(deadline) {
					t.Fatalf("a %d-byte answer its client has not read counts %d bytes in flight", size, s.bytesInFlight.Load())
				}
				time.Sleep(5 * time.Millisecond)
			}
			if status, _, body := post(t, base+c.path, c.body); status != http.StatusTooManyRequests {
				t.Fatalf("a request beside the held answer: %d %.200s, want 429", status, body)
			}
			slow.Close()
			waitIdle(t, s)
		})
	}
}

// dialSlowReader connects to base with a 4 KiB receive buffer and never
// reads: an answer larger than the socket buffers stays unwritten.
func dialSlowReader(t *testing.T, base string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
