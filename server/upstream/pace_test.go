package upstream

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestPace: on a paced stream over TLS, data lines 50 ms apart keep a
// 300 ms idle timeout off for 1.5 s (each quarter-timeout check sees them
// and the TLS connection reads on after it), while comment lines 50 ms
// apart do not: the read fails with a timeout within 300-375 ms.
func TestPace(t *testing.T) {
	f := func(line string, wantTimeout bool) {
		t.Helper()
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 0; i < 30; i++ {
				if _, err := io.WriteString(w, line); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}))
		defer srv.Close()
		c, err := New(Options{BaseURL: srv.URL, TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig, FirstByte: 5 * time.Second, Idle: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdle()
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(srv.URL + "/v1/chat/completions")
		if err := c.Do(req, resp); err != nil {
			t.Fatal(err)
		}
		defer resp.CloseBodyStream()
		Pace(resp.LocalAddr())
		start := time.Now()
		br := bufio.NewReader(resp.BodyStream())
		for {
			l, err := br.ReadBytes('\n')
			if bytes.HasPrefix(l, []byte("data:")) {
				Progress(resp.LocalAddr())
			}
			if err == io.EOF && !wantTimeout {
				return
			}
			if err != nil {
				if !wantTimeout || !IsTimeout(err) || time.Since(start) > time.Second {
					t.Fatalf("%q: %v after %v", line, err, time.Since(start))
				}
				return
			}
		}
	}
	f("data: {}\n\n", false)
	f(": ping\n\n", true)
}
