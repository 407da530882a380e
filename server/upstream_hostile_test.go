package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"slipstream/internal/testkit"
)

// hostileConfig is one Anthropic provider at up, key sk-client for the
// client and sk-ant-PROVIDER-SECRET for the provider.
func hostileConfig(up, extra string) string {
	return fmt.Sprintf("keys:\n  - {name: ci, key: sk-client-SECRET}\nproviders:\n  - {name: p, kind: anthropic, base_url: %q, keys: [sk-ant-PROVIDER-SECRET], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\nfailover: {max_attempts: 1}\n%s", up, extra)
}

const hostileBody = `{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"my private prompt"}]}`

// TestUpstreamCredentialEchoStaysBehind: an upstream (or a debugging
// proxy in front of it) that echoes the credential headers it got must
// not hand the provider's key to the client.
func TestUpstreamCredentialEchoStaysBehind(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for _, k := range []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key", "Api-Key"} {
			w.Header().Set(k, "echo "+r.Header.Get("X-Api-Key"))
		}
		w.Header().Set("Request-Id", "req_1")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, anthropicReply)
	}))
	base, _ := startServer(t, hostileConfig(up.URL, ""), "")
	status, h, _ := post(t, base+"/v1/messages", hostileBody, "X-Api-Key", "sk-client-SECRET")
	for k, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, "SECRET") {
				t.Errorf("the response header %s carries a key: %q", k, v)
			}
		}
	}
	if status != 200 || h.Get("Request-Id") != "req_1" {
		t.Fatalf("status %d, request id %q: the upstream's other headers must still pass", status, h.Get("Request-Id"))
	}
}

// TestUpstreamRedirectNotRelayed: slipstream does not follow an
// upstream's redirect, and must not pass it on either: a client that
// follows it would send its slipstream key and its prompt to the host the
// upstream chose. It is answered 502 in the client's dialect, without
// the Location.
func TestUpstreamRedirectNotRelayed(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var stolen string
	evil := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		stolen = r.Header.Get("X-Api-Key") + " " + string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, anthropicReply)
	}))
	for _, path := range []string{"/v1/messages", "/v1/chat/completions"} {
		up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Location", evil.URL+"/v1/messages")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(307)
			_, _ = io.WriteString(w, `{}`)
		}))
		base, _ := startServer(t, hostileConfig(up.URL, ""), "")
		body := hostileBody
		if path == "/v1/chat/completions" {
			body = `{"model":"m","messages":[{"role":"user","content":"my private prompt"}]}`
		}
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("X-Api-Key", "sk-client-SECRET")
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req) // follows redirects, as clients do
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		mu.Lock()
		s := stolen
		mu.Unlock()
		if s != "" {
			t.Fatalf("%s: the redirect reached the client, which sent %q to the upstream's host", path, s)
		}
		if resp.StatusCode != 502 || resp.Header.Get("Location") != "" || !strings.Contains(string(got), "redirect") {
			t.Fatalf("%s: %d %q %s", path, resp.StatusCode, resp.Header.Get("Location"), got)
		}
	}
}

// TestUpstreamLyingLengthAllocatesNothing: an upstream announcing a
// Content-Length it never sends gets no buffer of that size up front:
// what arrives is what is held.
func TestUpstreamLyingLengthAllocatesNothing(t *testing.T) {
	up := "http://" + testkit.Serve(t, func(c net.Conn) {
		defer c.Close()
		if _, err := readRequestHead(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 67000000\r\n\r\n{")
		time.Sleep(1500 * time.Millisecond) // then hangs up, the rest never sent
	})
	base, _ := startServer(t, hostileConfig(up, "limits: {max_bytes_in_flight: 1MiB}\n"), "")
	before := liveHeap()
	const n = 4
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: 5 * time.Second}
			req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(hostileBody))
			req.Header.Set("X-Api-Key", "sk-client-SECRET")
			req.Header.Set("Content-Type", "application/json")
			if resp, err := c.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(time.Second)
	grew := int64(liveHeap()) - int64(before)
	wg.Wait()
	if grew > 16<<20 {
		t.Fatalf("live heap grew by %d MiB for %d answers of one byte each", grew>>20, n)
	}
}
