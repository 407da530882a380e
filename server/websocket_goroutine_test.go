package server

import (
	"bufio"
	"bytes"
	"net"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestWSTurnStartsOneGoroutine: a streamed WebSocket turn runs on one
// goroutine, the turn's own (started for the message, so that an idle
// connection keeps only its reader): while its upstream call waits for the
// response head, and while the response streams, the process has one
// goroutine more than between turns, and no other (the upstream holds
// each stage). With keep-alive pings on (the default) or off. Each turn is
// sampled against the count settled before it (a goroutine of the
// previous turn may take a moment to end); the median growth over five
// turns must be one. Goroutines unrelated to the turn come and go
// meanwhile: the server's idle workers (the one that served the upgrade,
// the one that answered the readiness probe) leave a second or two after
// their connection, lowering the count of the turn they overlap. The
// median ignores up to two such turns either way, and a turn that always
// starts a second goroutine still shows it.
func TestWSTurnStartsOneGoroutine(t *testing.T) {
	for _, timeouts := range []string{"timeouts: {keepalive: 0s}\n", ""} {
		stream := responsesStream(8, "resp_1")
		half := len(stream) / 2
		half = bytes.Index([]byte(stream[half:]), []byte("\n\n")) + half + 2
		arrived, next := make(chan struct{}), make(chan struct{})
		up := stallingUpstream(t, stream, half, arrived, next)
		yml := "providers:\n  - {name: r, kind: openai, api: responses, base_url: \"${UP}/v1\", keys: [k], models: [\"*\"]}\n" + timeouts
		base, _ := startServer(t, yml, up)
		w := dialRawWS(t, base)
		frame := asFrame(responsesBody(4000), "")
		turn := func() (grew int) {
			before := settledGoroutines()
			w.send(t, frame)
			<-arrived // the call waits for the response head
			grew = runtime.NumGoroutine() - before
			next <- struct{}{}
			for { // read up to the first delta: the response is streaming
				if op, p := w.next(t); op == 1 && bytes.Contains(p, []byte("output_text.delta")) {
					break
				}
			}
			grew = max(grew, runtime.NumGoroutine()-before)
			next <- struct{}{}
			for {
				if op, p := w.next(t); op == 1 && bytes.HasPrefix(p, []byte(`{"type":"response.completed"`)) {
					return grew
				}
			}
		}
		turn() // the upstream connection is opened and kept
		var grew [5]int
		for i := range grew {
			grew[i] = turn()
		}
		slices.Sort(grew[:])
		if grew[2] != 1 {
			t.Errorf("%q: a streaming WebSocket turn runs with %d more goroutine(s) than an idle connection (turns: %v), want 1 (its own)", timeouts, grew[2], grew)
		}
	}
}

// settledGoroutines is the least goroutine count seen over 20ms.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		time.Sleep(time.Millisecond)
		n = min(n, runtime.NumGoroutine())
	}
	return n
}

// stallingUpstream answers every request on a kept connection with
// stream (as text/event-stream) in stages: once it read a request it
// sends on arrived; once next receives, the head and the first cut bytes
// of stream; once next receives again, the rest.
func stallingUpstream(t *testing.T, stream string, cut int, arrived chan<- struct{}, next <-chan struct{}) string {
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
					arrived <- struct{}{}
					<-next
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
