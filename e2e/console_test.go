package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// consoleToken is the admin token of the console test's config.
const consoleToken = "adm-e2e-console-0123456789"

// needChromium returns the path of a Chromium (or Chrome) binary, or
// skips the test (fails under SLIPSTREAM_REQUIRE_E2E=1).
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	skipE2E(t, "no chromium on PATH; install Debian's chromium (apt-get install chromium) to run the console's browser test")
	return ""
}

// consoleUpstream is an Anthropic upstream for the console test: it
// answers 429 to credential sk-up-a while limitA is set, streams model
// claude-slow one event every 100ms until its client leaves (reporting
// that on gone), and answers everything else at once.
func consoleUpstream(t *testing.T, limitA *atomic.Bool, gone chan<- struct{}) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-Api-Key") == "sk-up-a" && limitA.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"stub: rate limited"}}`)
			return
		}
		if !strings.Contains(string(body), "claude-slow") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":3}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-slow\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":11,\"output_tokens\":0}}}\n\n")
		io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		fl.Flush()
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				gone <- struct{}{}
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"%d \"}}\n\n", i); err != nil {
				gone <- struct{}{}
				return
			}
			fl.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func consoleConfig(upURL string) string {
	return fmt.Sprintf(`listen: {{LISTEN}}
keys:
  - {name: e2e, key: %s}
admin:
  tokens:
    - {name: ops, token: %s}
providers:
  - name: anth
    kind: anthropic
    base_url: %s
    strategy: fill-first
    keys: [{name: ka, key: sk-up-a}, {name: kb, key: sk-up-b}]
    models: ["claude-*"]
failover:
  rate_limited: 10m
timeouts:
  keepalive: 0s
log:
  access: true
`, testKey, consoleToken, upURL)
}

// consoleAsk sends one non-streamed request with the client key.
func consoleAsk(t *testing.T, base string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("request: %d %s", resp.StatusCode, b)
	}
}

// TestConsoleInBrowser drives the console in Chromium, on a phone-sized
// screen, against the real binary: sign in with the admin token; a
// credential rested by an injected 429 shows as cooling and is made
// ready from the page; a slow live stream appears and is cancelled from
// the page (the client gets Anthropic's error event); a request moves
// the key's usage on the page.
func TestConsoleInBrowser(t *testing.T) {
	chrome := needChromium(t)
	var limitA atomic.Bool
	limitA.Store(true)
	gone := make(chan struct{}, 4)
	p := startSlipstream(t, consoleConfig(consoleUpstream(t, &limitA, gone)))

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(390, 844), // a phone
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// The first action starts the browser: its context has no timeout
	// (a timeout would stop the browser); later steps get one each.
	if err := chromedp.Do(bctx, chromedp.Navigate(p.URL+"/console/")); err != nil {
		t.Fatalf("cannot start chromium: %v", err)
	}
	fail := func(what string, err error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 5*time.Second)
		defer cancel()
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: %v\npage:\n%s", what, err, clip([]byte(html), 4000))
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			fail(what, err)
		}
	}
	// text reads an element's text, again when the page redrew it
	// meanwhile (its node is gone: "No node with given id found").
	text := func(what string, sel chromedp.CSS) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(bctx, 5*time.Second)
			v, err := chromedp.Run(ctx, chromedp.Text(sel))
			cancel()
			if err == nil {
				return v
			}
			if time.Now().After(deadline) {
				fail(what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Sign in.
	run("sign in",
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), consoleToken),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.CSS("#overview-cards .card")),
	)

	// A 429 rests ka; the page shows it cooling, and ends the cooldown.
	consoleAsk(t, p.URL) // ka: 429, fails over to kb
	limitA.Store(false)
	run("credential cooling",
		chromedp.Click(chromedp.CSS(`nav a[href="#providers"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-cred="anth/ka"][data-state="cooling"]`)),
	)
	detail := text("cooling detail", `[data-cred="anth/ka"]`)
	if !strings.Contains(detail, "cooling") || !strings.Contains(detail, "rate_limited") {
		t.Fatalf("ka reads %q", detail)
	}
	run("end cooldown",
		chromedp.Click(chromedp.CSS(`[data-cred="anth/ka"] button[data-action="end-cooldown"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-cred="anth/ka"][data-state="ready"]`)),
	)

	// A slow stream goes live; it is cancelled from the page.
	streamEnd := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", p.URL+"/v1/messages", strings.NewReader(`{"model":"claude-slow","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			streamEnd <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		var all strings.Builder
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			all.WriteString(line)
			if err != nil {
				break
			}
		}
		streamEnd <- all.String()
	}()
	run("live stream listed",
		chromedp.Click(chromedp.CSS(`nav a[href="#live"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live-table tr[data-live] button[data-cancel]`)),
	)
	liveID := text("live id", `#live-table tr[data-live] td`)
	if model := text("live model", `#live-table tr[data-live] td:nth-child(3)`); model != "claude-slow" {
		t.Fatalf("live row %s shows model %q", liveID, model)
	}
	run("cancel from the page",
		chromedp.Click(chromedp.CSS(`#live-table tr[data-live] button[data-cancel]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#live-table tr[data-live]`)),
	)
	select {
	case got := <-streamEnd:
		if !strings.Contains(got, "event: error") || !strings.Contains(got, "cancelled") {
			t.Fatalf("the cancelled stream (%s) ends with %q", liveID, clip([]byte(got), 2000))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled stream did not end")
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream connection of the cancelled stream is still open")
	}
	if !strings.Contains(p.Log(), "cause=cancelled") {
		t.Fatalf("the access log lacks cause=cancelled:\n%s", clip([]byte(p.Log()), 4000))
	}

	// A request moves the key's usage on the page. The count to start
	// from is the API's once the page shows it (the cancelled stream's end
	// may still be on its way).
	run("keys",
		chromedp.Click(chromedp.CSS(`nav a[href="#keys"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-key="e2e"] td.requests`)),
	)
	waitCell := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		got := ""
		for got != want {
			if time.Now().After(deadline) {
				t.Fatalf("the key's requests read %q on the page, want %s", got, want)
			}
			time.Sleep(50 * time.Millisecond)
			got = strings.TrimSpace(text("key requests", `tr[data-key="e2e"] td.requests`))
		}
	}
	n := consoleKeyRequests(t, p.URL)
	waitCell(strconv.Itoa(n))
	consoleAsk(t, p.URL)
	waitCell(strconv.Itoa(n + 1))
	if tokens := text("key tokens", `tr[data-key="e2e"] td.tokens`); tokens == "0 / 0" {
		t.Fatalf("the key's tokens read %q", tokens)
	}
}

// consoleKeyRequests reads key e2e's request count from the API, once it
// stops moving (no request of the key is live).
func consoleKeyRequests(t *testing.T, base string) int {
	t.Helper()
	get := func(path string, v any) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+consoleToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var live []json.RawMessage
		get("/admin/api/live", &live)
		if len(live) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still live: %s", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var keys []struct {
		Name     string `json:"name"`
		Requests int    `json:"requests"`
	}
	get("/admin/api/keys", &keys)
	for _, k := range keys {
		if k.Name == "e2e" {
			return k.Requests
		}
	}
	t.Fatalf("no key e2e in %+v", keys)
	return 0
}
