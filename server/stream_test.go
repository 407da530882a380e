package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/internal/rawhttp"
)

const anthEvent = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"%d\"}}\n\n"

// TestStreamEventsAreNotBatched has the upstream send one event, then wait
// until the test has read that event at the client, before sending the
// next: a proxy that buffered or coalesced would deadlock here.
func TestStreamEventsAreNotBatched(t *testing.T) {
	t.Parallel()
	seen := make(chan int)
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, anthEvent, i)
			f.Flush()
			select {
			case got := <-seen:
				if got != i {
					return
				}
			case <-time.After(5 * time.Second):
				return // the proxy held the event back
			}
		}
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	base, _ := startServer(t, sameConfig, up.URL)
	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 5; i++ {
		deadline := time.AfterFunc(3*time.Second, func() { resp.Body.Close() })
		ev := readEvent(t, br)
		deadline.Stop()
		if !strings.Contains(ev, fmt.Sprintf(`"text":"%d"`, i)) {
			t.Fatalf("event %d: %q", i, ev)
		}
		seen <- i
	}
	if ev := readEvent(t, br); !strings.Contains(ev, "message_stop") {
		t.Fatalf("last event %q", ev)
	}
}

func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read event: %v (so far %q)", err, b.String())
		}
		if line == "\n" {
			return b.String()
		}
		b.WriteString(line)
	}
}

// TestClientDisconnectClosesUpstream drops the client mid-stream: the
// upstream must see its connection closed within 100 ms, and no goroutine
// may be left behind.
func TestClientDisconnectClosesUpstream(t *testing.T) {
	closed := make(chan time.Time, 1)
	var wrote atomic.Int64
	up := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if b, _ := io.ReadAll(r.Body); bytes.Contains(b, []byte(warmMark)) {
			io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		f := w.(http.Flusher)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, anthEvent, i); err != nil {
				closed <- time.Now()
				return
			}
			f.Flush()
			wrote.Add(1)
			select {
			case <-r.Context().Done():
				closed <- time.Now()
				return
			case <-time.After(5 * time.Millisecond):
			}
			if i > 4000 {
				return
			}
		}
	}))
	base, _ := startServer(t, sameConfig, up.URL)
	// A warm-up stream starts the client's and server's long-lived
	// goroutines (connection cleaners, a worker), which are not leaks.
	warm := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := warm.Post(base+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"`+warmMark+`"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()

	conn := rawhttp.Dial(t, base)
	body := `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`
	fmt.Fprintf(conn, "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	br := bufio.NewReader(conn)
	for n := 0; n < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: content_block_delta") {
			n++
		}
	}
	dropped := time.Now()
	conn.Close()
	select {
	case at := <-closed:
		if d := at.Sub(dropped); d > 100*time.Millisecond {
			t.Fatalf("upstream saw the close after %v", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("upstream connection still open 2s after the client left (%d events written)", wrote.Load())
	}
	waitGoroutines(t, before)
}

// waitGoroutines waits (bounded) for the goroutine count to come back to
// at most n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d > %d\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTruncatedStreamGetsErrorEvent: an upstream that closes without its
// terminal event must not look like a success to the client.
func TestTruncatedStreamGetsErrorEvent(t *testing.T) {
	t.Parallel()
	f := func(path, body, upStream, wantTail string) {
		t.Helper()
		rec := &recorder{reply: upStream, contentType: "text/event-stream"}
		up := newUpstream(t, rec)
		base, _ := startServer(t, sameConfig, up.URL)
		status, _, got := post(t, base+path, body)
		if status != 200 || !strings.HasPrefix(string(got), upStream) || !strings.HasSuffix(string(got), wantTail) {
			t.Fatalf("%s: status %d, got %q", path, status, got)
		}
	}
	f("/v1/messages", `{"model":"claude-x","max_tokens":5,"messages":[],"stream":true}`,
		fmt.Sprintf(anthEvent, 1),
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"provider anth: upstream stream ended before its terminal event\"}}\n\n")
	f("/v1/chat/completions", `{"model":"gpt-4o","messages":[],"stream":true}`,
		"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n",
		"data: {\"error\":{\"message\":\"provider chat: upstream stream ended before its terminal event\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n")
	f("/v1/responses", `{"model":"gpt-5","input":"x","stream":true}`,
		"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_9\"}}\n\n",
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":1,\"response\":{\"id\":\"resp_9\",\"object\":\"response\",\"created_at\":1767225600,\"model\":\"gpt-5\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"provider resp: upstream stream ended before its terminal event\"},\"output\":[],\"usage\":null}}\n\n")
}

// TestStreamEventsArrivingTogetherLeaveTogether: the events of one upstream
// read reach the client in one write (each write to the client is a pipe
// hand-off and a syscall in fasthttp), and none of them waits for the next
// read: before the relay reads again, everything whole it had is written.
// TestStreamEventsAreNotBatched is the same promise over real sockets.
func TestStreamEventsArrivingTogetherLeaveTogether(t *testing.T) {
	t.Parallel()
	var stream strings.Builder
	stream.WriteString(anthStart)
	for i := range 20 {
		fmt.Fprintf(&stream, anthEvent, i)
	}
	stream.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	all := stream.String()
	cut := strings.Index(all, fmt.Sprintf(`"text":"%d"`, 10)) // inside event 10
	whole := strings.LastIndex(all[:cut], "\n\n") + 2         // events before it

	up := newUpstream(t, &recorder{reply: chatReply})
	cfg := parseConfig(t, sameConfig, up.URL)
	_, s := serveConfigServer(t, cfg, io.Discard)
	rt, _, _ := match([]byte("POST"), []byte("/v1/messages"))
	var ctx fasthttp.RequestCtx
	size, ok := s.admit(&ctx, rt.dialect)
	if !ok {
		t.Fatal("not admitted")
	}
	var client writeCounter
	reads := &twoReads{first: all[:cut], second: all[cut:], before: func() {
		if client.String() != all[:whole] {
			t.Errorf("before the second read the client had %d bytes, want the %d of the whole events", client.Len(), whole)
		}
	}}
	x := acquireExchange(s, &ctx, rt, nil, size)
	x.upResp.SetBodyStream(reads, -1)
	x.streamKind = streamSame
	w := &batchWriter{}
	w.Reset(&client)
	x.writeStream(w)
	if client.String() != all {
		t.Fatalf("client got %q, want the stream as it came", client.String())
	}
	if client.writes != 2 {
		t.Fatalf("%d events that arrived in 2 reads left in %d writes, want 2", 22, client.writes)
	}
}

// writeCounter is a client connection that counts the writes made to it.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(b []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(b)
}

// twoReads answers first, then second (calling before first), then EOF.
type twoReads struct {
	first, second string
	before        func() // runs when a read needs the second arrival
	n             int    // arrivals read from
}

// Read returns what is left of the current arrival, up to len(p), as a
// socket does; a read past the first arrival takes the second.
func (r *twoReads) Read(p []byte) (int, error) {
	for r.first == "" {
		switch r.n++; r.n {
		case 1:
			r.before()
			r.first, r.second = r.second, ""
		default:
			return 0, io.EOF
		}
	}
	c := copy(p, r.first)
	r.first = r.first[c:]
	return c, nil
}
