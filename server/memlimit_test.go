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
	"testing"
	"time"
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
	hold, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	fmt.Fprintf(hold, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"%s", body, strings.Repeat("a", 16<<10))

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
