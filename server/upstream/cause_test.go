package upstream

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"slipstream/internal/testkit"
)

// call sends one POST to base through a new client and returns the error.
func call(t *testing.T, o Options, base string) error {
	t.Helper()
	o.BaseURL = base
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod("POST")
	req.SetRequestURI(base + "/v1/messages")
	req.SetBodyString(`{}`)
	err = c.Do(req, resp)
	if err == nil {
		_ = resp.CloseBodyStream()
	}
	return err
}

// silentServer accepts connections and never answers.
func silentServer(t *testing.T) string { return silentServerNotify(t, nil) }

// silentServerNotify is silentServer that signals on accepted, when not
// nil, each connection it accepts (without blocking when nobody reads).
func silentServerNotify(t *testing.T, accepted chan<- struct{}) string {
	return testkit.Serve(t, func(c net.Conn) {
		t.Cleanup(func() { c.Close() })
		if accepted != nil {
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	})
}

// resetServer reads a request head and resets the connection.
func resetServer(t *testing.T) string {
	return testkit.Serve(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	})
}

func TestClassifyRealCauses(t *testing.T) {
	f := func(name, base string, o Options, want Cause) {
		t.Helper()
		err := call(t, o, base)
		if got := Classify(err); got != want {
			t.Fatalf("%s: cause %v (%v), want %v", name, got, err, want)
		}
		if want.Status() == 0 || !strings.Contains(want.Text(), " ") {
			t.Fatalf("%s: no status or text", name)
		}
	}
	short := Options{Connect: 2 * time.Second, FirstByte: 300 * time.Millisecond}
	f("closed port", "http://"+testkit.ClosedAddr(t), short, CauseRefused)
	// .invalid never resolves (RFC 6761): no traffic leaves the machine
	// beyond the resolver.
	f("no such host", "http://upstream.invalid", short, CauseDNS)
	tlsUp := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsUp.Close)
	f("untrusted certificate", tlsUp.URL, short, CauseTLS)
	f("silent", "http://"+silentServer(t), short, CauseTimeout)
	f("reset", "http://"+resetServer(t), short, CauseReset)
	// A TLS handshake with a server that never answers it is a connect
	// timeout.
	f("silent TLS", "https://"+silentServer(t), Options{Connect: 200 * time.Millisecond}, CauseConnectTimeout)
	f("proxy refused", "http://upstream.invalid", Options{Connect: time.Second, Proxy: "http://" + testkit.ClosedAddr(t)}, CauseProxy)
}

func TestClassifyPoolFull(t *testing.T) {
	accepted := make(chan struct{}, 1)
	up := silentServerNotify(t, accepted)
	c, err := New(Options{BaseURL: "http://" + up, MaxConns: 1, Connect: 100 * time.Millisecond, FirstByte: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	send := func() error {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://" + up + "/x")
		return c.Do(req, resp)
	}
	go send() // holds the only connection until FirstByte
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the first call never reached the upstream")
	}
	if got := Classify(send()); got != CausePoolFull || got.Status() != 503 {
		t.Fatalf("cause %v, want pool_full (503)", got)
	}
}

func TestTrustedTLSWorks(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	t.Cleanup(up.Close)
	cfg := up.Client().Transport.(*http.Transport).TLSClientConfig
	for i := 0; i < 3; i++ { // the second and third reuse the connection
		if err := call(t, Options{TLS: cfg}, up.URL); err != nil {
			t.Fatal(err)
		}
	}
}
