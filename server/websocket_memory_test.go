//go:build !race

package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Large frames under a memory limit: 30 sockets each send one 60 MB
// response.create frame to a slipstream running with GOMEMLIMIT=64MiB
// (so limits.max_bytes_in_flight is derived: 16 MiB). Each frame is
// admitted from its header before its payload is read, so one is served
// (nothing else is in flight) and the others are refused with a 429 error
// event without being buffered: the process's peak RSS stays under
// 128 MB. Before, every frame was read whole first (about 1.9 GB). Not
// run under the race detector, whose shadow memory the bound does not
// allow for.
const (
	wsMemSockets = 30
	wsMemFrame   = 60 << 20 / 1000 * 1000 // 60 MB
	wsMemPeak    = 128 << 20
	wsMemEnv     = "SLIPSTREAM_TEST_WS_MEM_UPSTREAM"
)

func TestWSLargeFramesUnderMemoryLimit(t *testing.T) {
	if up := os.Getenv(wsMemEnv); up != "" {
		wsMemServe(t, up)
		return
	}
	if testing.Short() {
		t.Skip("skipped in -short: sends 1.8 GB over loopback")
	}
	up := rawUpstream(t, httpReply("text/event-stream", responsesStream(1, "resp_1")))
	cmd := exec.Command(os.Args[0], "-test.run=^TestWSLargeFramesUnderMemoryLimit$", "-test.count=1", "-test.timeout=150s")
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=64MiB", wsMemEnv+"="+up)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the child's server shuts down
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	base := wsMemBase(t, stdout, &stderr)

	start := time.Now()
	results := make([]string, wsMemSockets)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = wsMemSocket(base)
		}()
	}
	wg.Wait()
	hwm := wsMemHWM(t, cmd.Process.Pid)
	counts := map[string]int{}
	for _, r := range results {
		counts[r]++
	}
	t.Logf("%d sockets of one %d-byte frame in %v: %v; peak RSS (VmHWM) %.1f MiB", wsMemSockets, wsMemFrame, time.Since(start).Round(time.Millisecond), counts, float64(hwm)/(1<<20))
	for _, r := range results {
		if r != "completed" && r != "429" && r != "close 1009" {
			t.Errorf("a socket got %s, want response.completed, a 429 error event or close 1009", r)
		}
	}
	if counts["completed"] == 0 {
		t.Errorf("no frame was served")
	}
	if hwm > wsMemPeak {
		t.Errorf("peak RSS %.1f MiB, over %d MiB", float64(hwm)/(1<<20), wsMemPeak>>20)
	}
}

// wsMemServe is the child: a slipstream in front of upstream up, serving
// until its stdin closes.
func wsMemServe(t *testing.T, up string) {
	yml := "providers:\n  - {name: r, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\n" +
		"limits: {max_body_bytes: 64MiB}\ntimeouts: {keepalive: 0s}\n"
	base, s := startServer(t, yml, up)
	fmt.Printf("BASE %s max_bytes_in_flight=%d\n", base, s.Config().Limits.MaxBytesInFlight.N())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// wsMemBase reads the child's address from its first line.
func wsMemBase(t *testing.T, stdout io.Reader, stderr *bytes.Buffer) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "BASE ") {
				line <- sc.Text()
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		t.Log(l)
		return strings.Fields(l)[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("the child server did not start:\n%s", stderr.String())
	}
	return ""
}

// wsMemSocket opens a socket, sends one frame of wsMemFrame bytes from a
// small reused buffer (the client holds none of it) and returns what
// answered it: "completed", "429", "close <code>", or what went wrong. It
// returns once the whole frame is sent.
func wsMemSocket(base string) string {
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 10*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(120 * time.Second))
	fmt.Fprintf(c, "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	for first := true; ; first = false {
		line, err := br.ReadString('\n')
		if err != nil {
			return "upgrade: " + err.Error()
		}
		if first && !strings.Contains(line, " 101 ") {
			return "upgrade: " + strings.TrimSpace(line)
		}
		if line == "\r\n" {
			break
		}
	}
	sent := make(chan struct{})
	go func() { wsMemSend(c); close(sent) }()
	r := wsAnswer(br)
	<-sent // the whole frame went out: a refused one was read and dropped
	return r
}

// wsMemSend writes one masked (zero mask) text frame of wsMemFrame bytes:
// a response.create whose one message is mostly a's.
func wsMemSend(c net.Conn) {
	head := `{"type":"response.create","model":"gpt-t","store":false,"input":[{"type":"message","role":"user","content":"`
	tail := `"}]}`
	hdr := []byte{0x81, 0x80 | 127}
	hdr = binary.BigEndian.AppendUint64(hdr, wsMemFrame)
	hdr = append(hdr, 0, 0, 0, 0)
	if _, err := c.Write(append(hdr, head...)); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("a"), 256<<10)
	for left := wsMemFrame - len(head) - len(tail); left > 0; left -= len(chunk) {
		if _, err := c.Write(chunk[:min(left, len(chunk))]); err != nil {
			return
		}
	}
	_, _ = c.Write([]byte(tail))
}

// wsMemHWM returns the peak resident set size of process pid (VmHWM).
func wsMemHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
