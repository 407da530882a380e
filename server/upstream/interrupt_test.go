package upstream

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/internal/testkit"
)

// addrBody is a request body that reports the call's connection address
// while fasthttp writes it, in the goroutine running Do.
type addrBody struct {
	resp *fasthttp.Response
	got  chan net.Addr
	r    io.Reader
}

func (b *addrBody) Read(p []byte) (int, error) {
	select {
	case b.got <- b.resp.LocalAddr():
	default:
	}
	return b.r.Read(p)
}

// answerOnceServer answers the first request on each connection and
// then stays silent, counting requests.
func answerOnceServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var reqs atomic.Int32
	addr := testkit.Serve(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			reqs.Add(1)
			if n == 0 {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}
		}
	})
	return "http://" + addr, &reqs
}

func TestInterruptBeforeHeaders(t *testing.T) {
	base, reqs := answerOnceServer(t)
	c, err := New(Options{BaseURL: base, FirstByte: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	if Interrupt(nil) {
		t.Fatal("Interrupt(nil) = true")
	}
	send := func(body *addrBody) error {
		req, resp := fasthttp.AcquireRequest(), body.resp
		defer fasthttp.ReleaseRequest(req)
		req.Header.SetMethod("POST")
		req.SetRequestURI(base + "/v1/messages")
		req.SetBodyStream(body, 2)
		err := c.Do(req, resp)
		if err == nil {
			io.Copy(io.Discard, resp.BodyStream())
			resp.CloseBodyStream()
		}
		return err
	}
	newBody := func() *addrBody {
		return &addrBody{resp: fasthttp.AcquireResponse(), got: make(chan net.Addr, 1), r: &constReader{}}
	}
	if err := send(newBody()); err != nil { // the connection is now pooled
		t.Fatal(err)
	}
	b := newBody()
	done := make(chan error, 1)
	go func() { done <- send(b) }() // reuses it; the server stays silent
	a := <-b.got
	testkit.WaitFor(t, 5*time.Second, "the second request at the upstream", func() bool { return reqs.Load() == 2 })
	start := time.Now()
	if !Interrupt(a) {
		t.Fatalf("Interrupt(%v) = false", a)
	}
	err = <-done
	if err == nil || time.Since(start) > time.Second {
		t.Fatalf("Do returned %v after %v", err, time.Since(start))
	}
	if Stale(b.resp, err) {
		t.Fatal("an interrupted call on a reused connection counts as stale: it would be sent again")
	}
	if !Interrupt(a) { // idempotent
		t.Fatal("second Interrupt = false")
	}
	if n := reqs.Load(); n != 2 {
		t.Fatalf("upstream saw %d requests, want 2", n)
	}
}

type constReader struct{ done bool }

func (r *constReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	r.done = true
	return copy(p, "{}"), io.EOF
}
