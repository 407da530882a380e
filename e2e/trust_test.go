package e2e

// Probes of the promises an operator relies on without checking, run
// against the built binary over loopback: a memory limit that WebSocket
// frames cannot get around, a key revoked in the file that stops working
// within 2 s while a log file beside it is written, a budget that
// concurrency cannot beat, and a no-key loopback default that no web page
// can use.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
)

// TestTrustBrowserPageCannotSpend: with no client keys on loopback, what a
// web page can make a browser send (a cross-origin form or text/plain
// POST, a DNS-rebound Host, a WebSocket from a page) never reaches the
// provider.
func TestTrustBrowserPageCannotSpend(t *testing.T) {
	up := newStub(t, dialectChat, func(*stubReq) stubAnswer { return stubAnswer{Text: "hi"} })
	p := startSlipstream(t, fmt.Sprintf(`listen: {{LISTEN}}
providers:
  - name: stub
    kind: openai
    api: chat
    base_url: %s
    keys: ["sk-upstream-stub-key"]
    models: ["*"]
`, up.BaseURL()))
	body := `{"model":"gpt-probe","messages":[{"role":"user","content":"hi"}]}`
	post := func(name, host string, hdr map[string]string) {
		t.Helper()
		req, err := http.NewRequest("POST", p.URL+"/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("%s: status %d, want a 4xx refusal: %s", name, resp.StatusCode, clip(b, 300))
		}
	}
	evil := "https://evil.example"
	post("cross-origin text/plain (CSRF)", "", map[string]string{"Origin": evil, "Content-Type": "text/plain"})
	post("cross-origin form", "", map[string]string{"Origin": evil, "Content-Type": "application/x-www-form-urlencoded"})
	post("cross-origin JSON", "", map[string]string{"Origin": evil, "Content-Type": "application/json"})
	post("opaque origin", "", map[string]string{"Origin": "null", "Content-Type": "text/plain"})
	post("text/plain without Origin", "", map[string]string{"Content-Type": "text/plain"})
	post("DNS rebinding", "evil.example:"+portOf(p.Addr), map[string]string{"Content-Type": "application/json"})
	for _, h := range []map[string]string{
		{"Host": "evil.example:" + portOf(p.Addr)},
		{"Host": p.Addr, "Origin": evil},
	} {
		if status := upgradeStatus(t, p.Addr, h); status == 101 {
			t.Errorf("WebSocket upgrade with %v: 101, want a refusal", h)
		}
	}
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("the provider was called %d times by browser-shaped requests:\n%s", n, up.Dump())
	}
	// The same machine's own client is still served.
	resp, err := http.Post(p.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(up.Requests()) != 1 {
		t.Fatalf("a local JSON client: status %d, %d upstream calls: %s", resp.StatusCode, len(up.Requests()), clip(b, 300))
	}
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// upgradeStatus sends a WebSocket upgrade for /v1/responses with the
// headers h (Host among them) and returns the answer's status.
func upgradeStatus(t *testing.T, addr string, h map[string]string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	header := make([]string, 0, 2*len(h))
	for k, v := range h {
		header = append(header, k, v)
	}
	if _, err := io.WriteString(c, rawhttp.Upgrade("/v1/responses", header...)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("upgrade with %v: %v", h, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestTrustRevokedKeyStopsWithin2s: slipstream's own log goes to a file
// beside its config (`2>>slipstream.log`) while traffic flows, and another
// file there is written every 50 ms; a key removed from the file is
// refused within 2 s of the edit, and never served after that.
func TestTrustRevokedKeyStopsWithin2s(t *testing.T) {
	const keep, revoke = "sk-probe-keep", "sk-probe-revoke"
	cfg := func(keys ...string) string {
		var b strings.Builder
		b.WriteString("listen: {{LISTEN}}\nkeys:\n")
		for i, k := range keys {
			fmt.Fprintf(&b, "  - name: k%d\n    key: %s\n", i, k)
		}
		b.WriteString("providers:\n  - name: mock\n    kind: mock\n    models: [\"*\"]\nlog:\n  access: true\n")
		return b.String()
	}
	p := startSlipstreamWith(t, cfg(keep, revoke), startOpts{logFile: "slipstream.log"})
	text := strings.ReplaceAll(cfg(keep), "{{LISTEN}}", p.Addr)
	c := &http.Client{Timeout: 10 * time.Second}
	status := func(key string) int {
		req, _ := http.NewRequest("POST", p.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("request: %v", err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := status(revoke); s != 200 {
		t.Fatalf("the key to revoke: status %d before the edit", s)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	wg.Add(2)
	go func() { // traffic: every request appends an access line to the log file
		defer wg.Done()
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
			select {
			case <-stop:
				return
			default:
			}
			status(keep)
		}
	}()
	go func() { // a neighbour file written every 50 ms
		defer wg.Done()
		other := filepath.Join(filepath.Dir(p.Config), "other.txt")
		for i := 0; i < 400; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			_ = os.WriteFile(other, []byte(strconv.Itoa(i)), 0o600)
		}
	}()
	time.Sleep(300 * time.Millisecond) // the log and the neighbour are being written
	if err := os.WriteFile(p.Config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	for status(revoke) != 401 {
		if time.Since(edited) > 2*time.Second {
			t.Fatalf("the revoked key is still served %v after the edit", time.Since(edited).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("revoked after %v", time.Since(edited).Round(time.Millisecond))
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		if s := status(revoke); s != 401 {
			t.Fatalf("the revoked key was served again: status %d", s)
		}
	}
}

// TestTrustBudgetHoldsUnderConcurrency: 100 concurrent slow requests
// against a key with `budget: 20` (then `tpm: 20`) use at most the limit
// plus one request's usage.
func TestTrustBudgetHoldsUnderConcurrency(t *testing.T) {
	const perRequest = 10 // the upstream's usage: 6 in, 4 out
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-probe",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":6,"completion_tokens":4,"total_tokens":10}}`)
	}))
	t.Cleanup(up.Close)
	for _, limit := range []string{"budget: 20", "tpm: 20"} {
		t.Run(strings.TrimSuffix(strings.Fields(limit)[0], ":"), func(t *testing.T) {
			p := startSlipstream(t, fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - name: probe
    key: %s
    %s
providers:
  - name: stub
    kind: openai
    api: chat
    base_url: %s/v1
    keys: ["sk-upstream-stub-key"]
    models: ["*"]
`, testKey, limit, up.URL))
			var served, used atomic.Int64
			var wg sync.WaitGroup
			c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 100, MaxIdleConnsPerHost: 100}}
			for i := 0; i < 100; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest("POST", p.URL+"/v1/chat/completions",
						strings.NewReader(`{"model":"gpt-probe","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+testKey)
					resp, err := c.Do(req)
					if err != nil {
						t.Errorf("request: %v", err)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						return
					}
					var r struct {
						Usage struct{ TotalTokens int64 } `json:"usage"`
					}
					if json.Unmarshal(b, &r) != nil {
						t.Errorf("a 200 without a JSON body: %s", clip(b, 200))
					}
					served.Add(1)
					used.Add(perRequest)
				}()
			}
			wg.Wait()
			t.Logf("%s: %d of 100 served, %d tokens used", limit, served.Load(), used.Load())
			if served.Load() == 0 {
				t.Fatalf("nothing served: the limit refused even the first request")
			}
			if used.Load() > 20+perRequest {
				t.Fatalf("%d tokens used against %s: more than one request past the limit", used.Load(), limit)
			}
		})
	}
}

// TestTrustWebSocketFramesHoldMemLimit: 30 sockets each send one 60 MB
// response.create frame to slipstream under GOMEMLIMIT=64MiB; every socket
// gets an answer and the process never holds more than 128 MB.
func TestTrustWebSocketFramesHoldMemLimit(t *testing.T) {
	p := startSlipstreamWith(t, mockConfig("ok"), startOpts{env: []string{"GOMEMLIMIT=64MiB"}})
	const sockets, size = 30, 60 << 20
	answers := make([]string, sockets)
	var wg sync.WaitGroup
	for i := 0; i < sockets; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = sendHugeFrame(p.Addr, size)
		}()
	}
	wg.Wait()
	hwm := vmHWM(t, p.Pid)
	t.Logf("peak RSS %d MB; answers: %s", hwm>>20, summarize(answers))
	if hwm > 128<<20 {
		t.Errorf("peak RSS %d MB under GOMEMLIMIT=64MiB, want at most 128 MB", hwm>>20)
	}
	for i, a := range answers {
		if !strings.HasPrefix(a, "answer:") {
			t.Errorf("socket %d: %s", i, a)
		}
	}
}

// sendHugeFrame upgrades a socket, sends one text frame of about size bytes
// (a response.create whose input is one long string) and reads until an
// answer: a response.completed or error event, or a close frame. It
// returns "answer: ..." or what went wrong.
func sendHugeFrame(addr string, size int) string {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(90 * time.Second))
	_, err = io.WriteString(c, rawhttp.Upgrade("/v1/responses", "Host", addr, "Authorization", "Bearer "+testKey))
	if err != nil {
		return "upgrade: " + err.Error()
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		return fmt.Sprintf("upgrade: %v %v", err, resp)
	}
	head := []byte(`{"type":"response.create","model":"gpt-probe","input":"`)
	tail := []byte(`"}`)
	n := size - len(head) - len(tail)
	got := make(chan string, 1)
	go func() { got <- readAnswer(br) }()
	writeErr := writeFrame(c, head, n, tail)
	select {
	case a := <-got:
		return a
	case <-time.After(60 * time.Second):
		return fmt.Sprintf("no answer in 60 s (write: %v)", writeErr)
	}
}

// writeFrame writes one masked text frame of head, n filler bytes and tail.
// The mask key is zero, so the payload goes as is.
func writeFrame(w io.Writer, head []byte, n int, tail []byte) error {
	total := len(head) + n + len(tail)
	hdr := make([]byte, 0, 14)
	hdr = append(hdr, 0x81, 0x80|127)
	hdr = binary.BigEndian.AppendUint64(hdr, uint64(total))
	hdr = append(hdr, 0, 0, 0, 0)
	if _, err := w.Write(append(hdr, head...)); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	_, err := w.Write(tail)
	return err
}

// readAnswer reads server frames until an answer or an error.
func readAnswer(r *bufio.Reader) string {
	for {
		var h [2]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return "read: " + err.Error()
		}
		n := int64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return "read: " + err.Error()
			}
			n = int64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return "read: " + err.Error()
			}
			n = int64(binary.BigEndian.Uint64(b[:]))
		}
		if n > 1<<20 {
			return fmt.Sprintf("a server frame of %d bytes", n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return "read: " + err.Error()
		}
		switch h[0] & 0x0f {
		case 0x8:
			code := 0
			if len(payload) >= 2 {
				code = int(binary.BigEndian.Uint16(payload))
			}
			return fmt.Sprintf("answer: close %d", code)
		case 0x1:
			var ev struct {
				Type   string `json:"type"`
				Status int    `json:"status"`
			}
			_ = json.Unmarshal(payload, &ev)
			switch ev.Type {
			case "error":
				return fmt.Sprintf("answer: error %d", ev.Status)
			case "response.completed", "response.failed", "response.incomplete":
				return "answer: " + ev.Type
			}
		}
	}
}

// summarize counts equal strings.
func summarize(ss []string) string {
	n := map[string]int{}
	for _, s := range ss {
		n[s]++
	}
	var b strings.Builder
	for s, k := range n {
		fmt.Fprintf(&b, "%dx %q; ", k, s)
	}
	return b.String()
}

// vmHWM reads a process's peak resident set (VmHWM) in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("cannot read the peak RSS: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
