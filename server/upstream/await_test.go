package upstream

import (
	"bufio"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/internal/testkit"
)

// awaitBody is a request body that arms Await once fasthttp has taken the
// connection, as the server's body streams do.
type awaitBody struct {
	resp  *fasthttp.Response
	every time.Duration
	ticks *atomic.Int32
}

func (b *awaitBody) WriteTo(w io.Writer) (int64, error) {
	tick := func() time.Time {
		b.ticks.Add(1)
		return time.Now().Add(b.every)
	}
	Await(b.resp.LocalAddr(), time.Now().Add(b.every), tick)
	n, err := w.Write([]byte(`{}`))
	return int64(n), err
}

func (b *awaitBody) Read([]byte) (int, error) { return 0, io.EOF }

// lateServer answers each request's head after delay.
func lateServer(t *testing.T, delay time.Duration) string {
	return "http://" + testkit.Serve(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			var req fasthttp.Request
			if req.Read(br) != nil {
				return
			}
			time.Sleep(delay)
			if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
				return
			}
		}
	})
}

func awaitCall(t *testing.T, c *Client, base string, every time.Duration) (int32, error) {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod("POST")
	req.SetRequestURI(base + "/v1/messages")
	var ticks atomic.Int32
	req.SetBodyStream(&awaitBody{resp: resp, every: every, ticks: &ticks}, 2)
	err := c.Do(req, resp)
	if err == nil {
		_ = resp.CloseBodyStream()
	}
	return ticks.Load(), err
}

// A call whose head comes late ticks on the goroutine that waits, every
// interval, and ends normally; the next call on the same connection does
// not tick unless armed; the first-byte timeout still ends a silent wait.
func TestAwaitTicks(t *testing.T) {
	base := lateServer(t, 260*time.Millisecond)
	c, err := New(Options{BaseURL: base, FirstByte: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	n, err := awaitCall(t, c, base, 50*time.Millisecond)
	if err != nil || n < 3 || n > 6 {
		t.Fatalf("a head 260ms late, ticks every 50ms: %d ticks, err %v", n, err)
	}
	n, err = awaitCall(t, c, base, time.Hour)
	if err != nil || n != 0 {
		t.Fatalf("a tick due in an hour: %d ticks, err %v", n, err)
	}

	silent := "http://" + silentServer(t)
	c2, err := New(Options{BaseURL: silent, FirstByte: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseIdle()
	start := time.Now()
	n, err = awaitCall(t, c2, silent, 40*time.Millisecond)
	if Classify(err) != CauseTimeout || n < 4 || time.Since(start) > 2*time.Second {
		t.Fatalf("silent upstream: %d ticks, cause %v (%v) after %v", n, Classify(err), err, time.Since(start))
	}
}
