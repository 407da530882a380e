package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"slipstream/internal/rawhttp"
	"slipstream/internal/testkit"
)

// Codex CLI through its BUILT-IN provider, as most people point it at a
// proxy: `openai_base_url` in config.toml and no model_providers table.
// That provider prefers the Responses WebSocket transport
// (ws://HOST/v1/responses): a prewarm frame, then one frame per request,
// chaining on the previous response with only the new items. These tests
// check that every turn went over one socket (no HTTP fallback) and that
// the upstream, of every dialect, saw the whole conversation.
//
// Auth: Codex sends Authorization only when it has a credential of its
// own; with just OPENAI_API_KEY it sends none. The tests set CODEX_API_KEY
// to the client key, as a user of a proxy with client keys would.

// codexBuiltinConfig is CODEX_HOME/config.toml for the built-in provider
// at the proxy.
func codexBuiltinConfig(proxyURL, model string) string {
	return fmt.Sprintf(`model = %q
openai_base_url = "%s/v1"
check_for_update_on_startup = false
approval_policy = "never"
sandbox_mode = "danger-full-access"

[analytics]
enabled = false

[features]
plugins = false
`, model, proxyURL)
}

// codexBuiltinEnv prepares HOME and CODEX_HOME for the built-in provider
// and returns the environment to run Codex with.
func codexBuiltinEnv(t *testing.T, p *proxy, model string) []string {
	t.Helper()
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexBuiltinConfig(p.URL, model)), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		"CODEX_API_KEY=" + testKey,
		"RUST_LOG=warn",
	}
}

// runCodexBuiltin runs `codex exec` with the built-in provider.
func runCodexBuiltin(t *testing.T, p *proxy, model, dir, prompt string) cliResult {
	t.Helper()
	node, script := codexCmd(t)
	env := codexBuiltinEnv(t, p, model)
	return runCLI(t, node, []string{script, "exec", "--json", "--skip-git-repo-check", "--ephemeral", prompt}, dir, env)
}

// wsLog is what slipstream's log says about the WebSocket transport and
// the Responses POSTs it served.
type wsLog struct {
	Opens    int       // sockets opened
	Prewarms int       // prewarm frames
	Frames   []wsFrame // frames served through the handler
	Posts    int       // POST /v1/responses served (frames included)
}

type wsFrame struct {
	Chained          bool
	FrameBytes, Body int
	Status           int
}

var (
	wsFrameLine = regexp.MustCompile(`WS "[^"]*" frame=\d+ chained=(true|false) frame_bytes=(\d+) body=(\d+) status=(\d+)`)
	postLine    = regexp.MustCompile(` route=/v1/responses `)
)

// settledWSLog parses the log once the lines of the last request are
// there, and of at least minFrames frames: a frame's line is written when
// its relay ends, a moment after the client has read response.completed
// (and may have exited, or started its next turn).
func settledWSLog(p *proxy, minFrames int) wsLog {
	deadline := time.Now().Add(3 * time.Second)
	for {
		l := parseWSLog(p.Log())
		if l.Posts == len(l.Frames) && len(l.Frames) >= minFrames || time.Now().After(deadline) {
			return l
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func parseWSLog(log string) wsLog {
	var l wsLog
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, `WS "`) && strings.Contains(line, " open "):
			l.Opens++
		case strings.Contains(line, `WS "`) && strings.HasSuffix(line, " prewarm"):
			l.Prewarms++
		case wsFrameLine.MatchString(line):
			m := wsFrameLine.FindStringSubmatch(line)
			f := wsFrame{Chained: m[1] == "true"}
			f.FrameBytes, _ = strconv.Atoi(m[2])
			f.Body, _ = strconv.Atoi(m[3])
			f.Status, _ = strconv.Atoi(m[4])
			l.Frames = append(l.Frames, f)
		case postLine.MatchString(line):
			l.Posts++
		}
	}
	return l
}

// wantWebSocketTurns checks that Codex opened one socket and that every
// Responses request it made was a frame on it (every POST slipstream
// served came from a frame: no HTTP fallback), that at least minChained
// frames chained on the previous response, and that a chained frame
// carried less than the body the upstream got (it was expanded).
func wantWebSocketTurns(t *testing.T, p *proxy, minChained int) wsLog {
	t.Helper()
	l := settledWSLog(p, minChained) // a turn's lines are written after its client saw it complete
	chained := 0
	for _, f := range l.Frames {
		if f.Chained {
			chained++
			if f.FrameBytes >= f.Body {
				t.Errorf("a chained frame of %d bytes became a body of %d: not expanded", f.FrameBytes, f.Body)
			}
		}
	}
	if l.Opens != 1 || len(l.Frames) == 0 || l.Posts != len(l.Frames) || chained < minChained {
		t.Errorf("websocket: %d sockets, %d prewarms, %d frames (%d chained), %d POSTs; want 1 socket, every POST a frame, at least %d chained\n%s",
			l.Opens, l.Prewarms, len(l.Frames), chained, l.Posts, minChained, clip([]byte(p.Log()), 6000))
	}
	return l
}

func TestCodexWebSocket(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	for _, up := range codexUpstreams {
		t.Run(up.name+"/text", func(t *testing.T) { testCodexWSText(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/exec_command", func(t *testing.T) { testCodexWSTool(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/apply_patch", func(t *testing.T) { testCodexWSApplyPatch(t, up.kind, up.api, up.dialect) })
		t.Run(up.name+"/truncated", func(t *testing.T) { testCodexWSTruncated(t, up.kind, up.api, up.dialect) })
	}
}

// testCodexWSTruncated: the upstream's first stream stops halfway. Over
// the socket that is a response.failed (never a fake response.completed);
// Codex retries on a new socket with the whole input and shows the whole
// answer of the second upstream stream.
func testCodexWSTruncated(t *testing.T, kind, api, dialect string) {
	const full = "This answer arrives whole only on the second attempt."
	var mu sync.Mutex
	n := 0
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		mu.Lock()
		defer mu.Unlock()
		n++
		return stubAnswer{Text: full, Truncate: n == 1}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodexBuiltin(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	ev := parseCodexJSONL(res.Stdout)
	if res.Code != 0 || !ev.Completed || ev.Answer != full {
		t.Errorf("codex after a truncated upstream stream: exit %d, completed %v, answer %q, errors %q; want the whole answer after a retry\nstdout:\n%s\nstderr:\n%s\nupstream:\n%s",
			res.Code, ev.Completed, ev.Answer, ev.Errors, clip(res.Stdout, 3000), clip(res.Stderr, 3000), s.Dump())
	}
	l := settledWSLog(p, 0)
	if l.Opens < 2 || l.Posts != len(l.Frames) || len(s.Requests()) < 2 {
		t.Errorf("truncation: %d sockets, %d frames, %d POSTs, %d upstream requests; want a retry on a new socket, no HTTP fallback\n%s",
			l.Opens, len(l.Frames), l.Posts, len(s.Requests()), clip([]byte(p.Log()), 6000))
	}
}

func testCodexWSText(t *testing.T, kind, api, dialect string) {
	want := fmt.Sprintf("PONG over the socket from the %s stub", dialect)
	s := newStub(t, dialect, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodexBuiltin(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, want, s)
	// The turn chains on the prewarm: its frame holds only the turn's
	// items, and the upstream gets the instructions and the prompt.
	wantWebSocketTurns(t, p, 1)
	main := mainRequests(t, s)
	if len(main) == 0 {
		return
	}
	if !strings.Contains(string(main[0].Body), "Reply with the word PONG.") {
		t.Errorf("upstream request lacks the prompt: %s", clip(main[0].Body, 2000))
	}
	wantUpstreamAuth(t, dialect, main[0])
}

func testCodexWSTool(t *testing.T, kind, api, dialect string) {
	word := "ws-hi-from-" + dialect
	const callID = "call_ws_shell_01"
	final := "The command printed its word over the socket."
	const prompt = "Run echo and tell me what it printed."
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		if _, results := toolHistory(dialect, r.JSON); len(results) > 0 {
			return stubAnswer{Text: final}
		}
		return stubAnswer{Tool: "exec_command", ToolArgs: codexShellArgs("exec_command", word), CallID: callID}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodexBuiltin(t, p, codexModel, t.TempDir(), prompt)
	wantCodexResult(t, res, final, s)
	// The follow-up frame carries only the tool output; the upstream gets
	// the prompt, the call and its output.
	wantWebSocketTurns(t, p, 2)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, "exec_command", word)
	if !strings.Contains(string(main[1].Body), prompt) {
		t.Errorf("the follow-up upstream request lacks the prompt (input not expanded): %s", clip(main[1].Body, 3000))
	}
}

func testCodexWSApplyPatch(t *testing.T, kind, api, dialect string) {
	dir := t.TempDir()
	const callID = "call_ws_patch_01"
	content := "patched over the socket through " + dialect
	patch := "*** Begin Patch\n*** Add File: hello.txt\n+" + content + "\n*** End Patch\n"
	final := "The patch is applied."
	const prompt = "Create hello.txt with a patch."
	s := newStub(t, dialect, func(r *stubReq) stubAnswer {
		_, results := toolHistory(dialect, r.JSON)
		if len(results) > 0 || !contains(toolNames(dialect, r.JSON), "apply_patch") {
			return stubAnswer{Text: final}
		}
		if dialect == dialectResponses {
			return stubAnswer{Tool: "apply_patch", ToolArgs: patch, CallID: callID, Custom: true}
		}
		return stubAnswer{Tool: "apply_patch", ToolArgs: js(map[string]string{"input": patch}), CallID: callID}
	})
	p := startSlipstream(t, upstreamConfig(kind, api, s.BaseURL()))
	res := runCodexBuiltin(t, p, codexModel, dir, prompt)
	wantCodexResult(t, res, final, s)
	if got, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || strings.TrimSpace(string(got)) != content {
		t.Errorf("hello.txt after apply_patch: %q, %v; want %q", got, err, content)
	}
	wantWebSocketTurns(t, p, 2)
	main := mainRequests(t, s)
	if len(main) < 2 {
		t.Fatalf("upstream saw %d requests with tools, want 2\n%s", len(main), s.Dump())
	}
	wantToolRoundTrip(t, dialect, main[1], callID, "apply_patch", "hello.txt")
	if !strings.Contains(string(main[1].Body), prompt) {
		t.Errorf("the follow-up upstream request lacks the prompt (input not expanded): %s", clip(main[1].Body, 3000))
	}
}

// TestCodexWebSocketMultiTurn drives `codex app-server` (the protocol
// IDEs use) through two user turns of one thread: both go over one
// socket, the second frame carries only the new user message, and the
// upstream gets the whole conversation.
func TestCodexWebSocketMultiTurn(t *testing.T) {
	t.Parallel()
	node, script := codexCmd(t)
	var mu sync.Mutex
	n := 0
	s := newStub(t, dialectChat, func(r *stubReq) stubAnswer {
		mu.Lock()
		defer mu.Unlock()
		n++
		return stubAnswer{Text: fmt.Sprintf("answer number %d", n)}
	})
	// Server pings every 100 ms: Codex answers them while it streams and
	// while it waits between turns.
	p := startSlipstream(t, strings.Replace(upstreamConfig("openai", "chat", s.BaseURL()), "timeouts:\n", "timeouts:\n  ws_ping: 100ms\n", 1))
	env := codexBuiltinEnv(t, p, codexModel)
	app := startAppServer(t, node, script, t.TempDir(), env)
	app.call(t, "initialize", map[string]any{"clientInfo": map[string]any{"name": "slipstream-e2e", "version": "1"}})
	app.notify(t, "initialized")
	// The app server does not read CODEX_API_KEY: an IDE user logs in
	// with the key, which Codex then sends as Authorization.
	app.call(t, "account/login/start", map[string]any{"type": "apiKey", "apiKey": testKey})
	th := app.call(t, "thread/start", map[string]any{"model": codexModel, "cwd": app.dir, "approvalPolicy": "never", "sandbox": "danger-full-access", "ephemeral": true})
	var started struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err := json.Unmarshal(th, &started); err != nil || started.Thread.ID == "" {
		t.Fatalf("thread/start: %s", th)
	}
	for _, prompt := range []string{"First question: say one.", "Second question: say two."} {
		app.call(t, "turn/start", map[string]any{"threadId": started.Thread.ID, "input": []any{map[string]any{"type": "text", "text": prompt}}})
		app.waitNotification(t, "turn/completed")
	}
	l := wantWebSocketTurns(t, p, 2)
	if len(l.Frames) != 2 {
		t.Errorf("%d frames for two turns, want 2", len(l.Frames))
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream saw %d requests, want 2\n%s", len(reqs), s.Dump())
	}
	body := string(reqs[1].Body)
	for _, want := range []string{"First question: say one.", "answer number 1", "Second question: say two."} {
		if !strings.Contains(body, want) {
			t.Errorf("turn 2's upstream request lacks %q (input not expanded): %s", want, clip(reqs[1].Body, 3000))
		}
	}
}

// appServer is a running `codex app-server`, spoken to in JSON-RPC lines
// over stdio.
type appServer struct {
	dir   string
	stdin io.WriteCloser
	lines chan map[string]any
	next  int
}

func startAppServer(t *testing.T, node, script, dir string, env []string) *appServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*cliTimeout)
	cmd := exec.CommandContext(ctx, node, script, "app-server")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "CI=1"}, newTrapProxy(t).Env()...)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start codex app-server: %v", err)
	}
	a := &appServer{dir: dir, stdin: stdin, lines: make(chan map[string]any, 256)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				a.lines <- m
			}
		}
		close(a.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("codex app-server stderr:\n%s", clip(stderr.Bytes(), 4000))
		}
	})
	return a
}

func (a *appServer) send(t *testing.T, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if _, err := a.stdin.Write(append(b, '\n')); err != nil {
		t.Fatalf("app-server stdin: %v", err)
	}
}

func (a *appServer) notify(t *testing.T, method string) {
	a.send(t, map[string]any{"method": method})
}

// call sends a request and returns its result, failing on an error reply.
func (a *appServer) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	a.next++
	id := a.next
	a.send(t, map[string]any{"id": id, "method": method, "params": params})
	m := a.wait(t, method, func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && int(v) == id })
	if e, ok := m["error"]; ok {
		t.Fatalf("app-server %s: %v", method, e)
	}
	b, _ := json.Marshal(m["result"])
	return b
}

func (a *appServer) waitNotification(t *testing.T, method string) {
	t.Helper()
	a.wait(t, method, func(m map[string]any) bool { return m["method"] == method })
}

func (a *appServer) wait(t *testing.T, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	timeout := time.After(cliTimeout)
	for {
		select {
		case m, open := <-a.lines:
			if !open {
				t.Fatalf("app-server exited while waiting for %s", what)
			}
			if m["method"] == "error" {
				t.Errorf("app-server error notification: %v", m["params"])
			}
			if ok(m) {
				return m
			}
		case <-timeout:
			t.Fatalf("app-server: no %s within %v", what, cliTimeout)
		}
	}
}

// TestCodexWebSocketStateEvicted: with limits.ws_state_bytes too small to
// keep any transcript, every chained frame is answered
// previous_response_not_found; Codex reconnects and resends the whole
// input, and the tool round trip still completes over WebSockets (no HTTP
// fallback).
func TestCodexWebSocketStateEvicted(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	const callID = "call_ws_evicted_01"
	final := "Done after resending everything."
	s := newStub(t, dialectChat, func(r *stubReq) stubAnswer {
		if _, results := toolHistory(dialectChat, r.JSON); len(results) > 0 {
			return stubAnswer{Text: final}
		}
		return stubAnswer{Tool: "exec_command", ToolArgs: codexShellArgs("exec_command", "evicted"), CallID: callID}
	})
	cfg := upstreamConfig("openai", "chat", s.BaseURL()) + "limits:\n  ws_state_bytes: 1\n"
	p := startSlipstream(t, cfg)
	res := runCodexBuiltin(t, p, codexModel, t.TempDir(), "Run echo and tell me what it printed.")
	wantCodexResult(t, res, final, s)
	l := settledWSLog(p, 0)
	notFound := strings.Count(p.Log(), "previous_response_not_found")
	if l.Opens < 2 || notFound == 0 || l.Posts != len(l.Frames) {
		t.Errorf("evicted state: %d sockets, %d not-found answers, %d frames, %d POSTs; want a resend on a new socket and no HTTP fallback\n%s",
			l.Opens, notFound, len(l.Frames), l.Posts, clip([]byte(p.Log()), 6000))
	}
	main := mainRequests(t, s)
	if len(main) >= 2 {
		wantToolRoundTrip(t, dialectChat, main[len(main)-1], callID, "exec_command", "evicted")
	}
}

// TestCodexWebSocketFallback426: when slipstream refuses the upgrade with
// 426 (limits.ws_connections reached, here by a socket the test holds),
// Codex goes straight to HTTP POST and the turn completes.
func TestCodexWebSocketFallback426(t *testing.T) {
	t.Parallel()
	codexCmd(t)
	want := "Answered over HTTP."
	s := newStub(t, dialectResponses, func(r *stubReq) stubAnswer { return stubAnswer{Text: want} })
	cfg := upstreamConfig("openai", "responses", s.BaseURL()) + "limits:\n  ws_connections: 1\n"
	p := startSlipstream(t, cfg)
	hold := holdWebSocket(t, p)
	defer hold.Close()
	res := runCodexBuiltin(t, p, codexModel, t.TempDir(), "Reply with the word PONG.")
	wantCodexResult(t, res, want, s)
	testkit.Eventually(3*time.Second, func() bool { return parseWSLog(p.Log()).Posts > 0 }) // the POST's line is written after its answer
	l := parseWSLog(p.Log())
	if l.Opens != 1 || len(l.Frames) != 0 || l.Posts == 0 {
		t.Errorf("after a 426: %d sockets (the test's), %d frames, %d POSTs; want Codex on HTTP only\n%s", l.Opens, len(l.Frames), l.Posts, clip([]byte(p.Log()), 6000))
	}
}

// holdWebSocket opens a WebSocket to slipstream and keeps it open (a raw
// handshake; the test never sends a frame).
func holdWebSocket(t *testing.T, p *proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	req := rawhttp.Upgrade("/v1/responses", "Host", p.Addr, "Authorization", "Bearer "+testKey)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, " 101 ") {
		t.Fatalf("holding a websocket: %q %v", line, err)
	}
	return c
}
