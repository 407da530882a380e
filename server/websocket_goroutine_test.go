package server

import (
	"bufio"
	"bytes"
	"net"
	"runtime"
	"strconv"
	"testing"
)

// TestWSTurnStartsNoGoroutine: a streamed WebSocket turn runs on the
// connection's own goroutine: while a response streams (held mid-stream
// by the upstream) the process has no more goroutines than between turns.
// Each stalled turn is sampled; the least growth over a few turns must be
// zero, so a goroutine that happens to end meanwhile cannot hide one the
// turn started.
func TestWSTurnStartsNoGoroutine(t *testing.T) {
	stream := responsesStream(8, "resp_1")
	half := len(stream) / 2
	half = bytes.Index([]byte(stream[half:]), []byte("\n\n")) + half + 2
	next := make(chan struct{})
	up := stallingUpstream(t, stream, half, next)
	yml := "providers:\n  - {name: r, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\ntimeouts: {keepalive: 0s}\n"
	base, _ := startServer(t, yml, up)
	w := dialRawWS(t, base)
	frame := asFrame(responsesBody(4000), "")
	turn := func() (grew int) {
		before := runtime.NumGoroutine()
		w.send(t, frame)
		for { // read up to the first delta: the response is streaming
			if op, p := w.next(t); op == 1 && bytes.Contains(p, []byte("output_text.delta")) {
				break
			}
		}
		grew = runtime.NumGoroutine() - before
		next <- struct{}{}
		for {
			if op, p := w.next(t); op == 1 && bytes.HasPrefix(p, []byte(`{"type":"response.completed"`)) {
				return grew
			}
		}
	}
	turn() // the upstream connection is opened and kept
	least := 1 << 30
	for i := 0; i < 5; i++ {
		least = min(least, turn())
	}
	if least > 0 {
		t.Fatalf("a streaming WebSocket turn runs with %d more goroutine(s) than an idle connection, want 0", least)
	}
}

// stallingUpstream answers every request on a kept connection with
// stream (as text/event-stream), sending its first cut bytes at once and
// the rest once next receives.
func stallingUpstream(t *testing.T, stream string, cut int, next <-chan struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " + strconv.Itoa(len(stream)) + "\r\n\r\n"
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReaderSize(c, 64<<10)
				for {
					n, err := readRequestHead(br)
					if err != nil {
						return
					}
					if _, err := br.Discard(n); err != nil {
						return
					}
					if _, err := c.Write([]byte(head + stream[:cut])); err != nil {
						return
					}
					<-next
					if _, err := c.Write([]byte(stream[cut:])); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}
