package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"slipstream/codec"
	"slipstream/internal/testkit"
	"slipstream/server"
	"slipstream/server/config"
)

// Ownership is checked strictly, as in the server's own tests.
func init() { server.CheckOwnershipStrictly() }

// Secrets that must never reach a log line, a client or the wrong side.
const (
	clientKey   = "sk-chaos-client-7f3a9c1e5b"
	providerKey = "sk-chaos-provider-2d8e4b6a0c"
	model       = "chaos-x"
)

// env is one case's world: a misbehaving upstream, a slipstream in front
// of it, and a client.
type env struct {
	t        *testing.T
	d, upD   codec.Dialect
	stream   bool
	up       *Upstream // nil when the upstream refuses connections
	base     string    // slipstream's URL
	srv      *server.Server
	served   chan struct{}
	log      testkit.Buffer
	client   *http.Client
	timeouts map[string]string // overrides of defaultTimeouts
}

// defaultTimeouts are short, so faults resolve fast. connect is the
// exception: no fault withholds a connection's handshake (a refused port
// answers at once), and a loaded machine (the race suite running beside
// this one) once starved a loopback dial past a 1s timeout, failing a
// case whose upstream was fine.
var defaultTimeouts = map[string]string{"connect": "5s", "idle": "1s", "keepalive": "100ms", "shutdown": "2s"}

// configYAML is the case's configuration: one client key, the upstream
// as provider of chaos-*, a local mock serving "probe" (the admission
// probe), one admission slot, short timeouts, and the access log on.
func (e *env) configYAML(upURL string) string {
	return "keys:\n  - {name: chaos, key: " + clientKey + "}\n" +
		"providers:\n" + ProviderYAML("up", e.upD, upURL, "chaos-*", providerKey) +
		"  - {name: probe, kind: mock, models: [probe]}\n" +
		"limits: {max_concurrent: 1}\n" +
		"timeouts:\n" + e.timeoutsYAML() +
		"log: {access: true}\n"
}

func (e *env) timeoutsYAML() string {
	m := map[string]string{}
	for k, v := range defaultTimeouts {
		m[k] = v
	}
	for k, v := range e.timeouts {
		m[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("  " + k + ": " + m[k] + "\n")
	}
	return b.String()
}

// start runs slipstream in front of upURL.
func (e *env) start(upURL string) {
	t := e.t
	cfg, err := config.Parse([]byte(e.configYAML(upURL)), testkit.Env())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	e.srv, err = server.New(cfg, server.Options{Log: &e.log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.base = "http://" + ln.Addr().String()
	e.served = make(chan struct{})
	go func() { _ = e.srv.Serve(ln); close(e.served) }()
	e.client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
}

// stop shuts slipstream down; a server that cannot drain in time still
// runs a request it should have ended.
func (e *env) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		e.t.Errorf("shutdown did not drain within 3s: %v", err)
	}
	<-e.served
	e.client.CloseIdleConnections()
}

// request sends the case's request with an HTTP client and reads the
// whole reply.
func (e *env) request() *Reply {
	path, h, body := ClientRequest(e.d, model, clientKey, e.stream)
	req, err := http.NewRequest("POST", e.base+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header = h
	resp, err := e.client.Do(req)
	if err != nil {
		return &Reply{DoErr: err}
	}
	defer resp.Body.Close()
	r := &Reply{Status: resp.StatusCode, Header: resp.Header}
	r.Body, r.ReadErr = io.ReadAll(resp.Body)
	return r
}

// dial opens a raw client connection and sends the case's request on it.
func (e *env) dial() net.Conn { return e.dialWith(&net.Dialer{}) }

// dialWith is dial with a dialer of the caller's.
func (e *env) dialWith(d *net.Dialer) net.Conn {
	c, err := d.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	path, h, body := ClientRequest(e.d, model, clientKey, e.stream)
	if _, err := c.Write(RawRequest(path, h, body)); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// probe asks the local mock for a reply: 200 means an admission slot was
// free.
func (e *env) probe() (int, error) {
	req, _ := http.NewRequest("POST", e.base+"/v1/chat/completions",
		strings.NewReader(`{"model":"probe","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// alive reports whether slipstream still answers /healthz.
func (e *env) alive() error {
	resp, err := e.client.Get(e.base + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("healthz: %d %q", resp.StatusCode, b)
	}
	return nil
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(ents)
}

// checkBaseline waits for goroutines and file descriptors to come back
// to at most their baseline plus slack.
func checkBaseline(t *testing.T, goroutines, fds int) {
	t.Helper()
	const slack = 2
	if !testkit.Eventually(5*time.Second, func() bool { n, _ := countGoroutines(); return n <= goroutines+slack }) {
		n, stacks := countGoroutines()
		t.Errorf("goroutines: %d, baseline %d\n%s", n, goroutines, stacks)
	}
	if !testkit.Eventually(5*time.Second, func() bool { return openFDs(t) <= fds+slack }) {
		t.Errorf("file descriptors: %d open, baseline %d", openFDs(t), fds)
	}
}

// idleCleaners are goroutines fasthttp keeps after its last
// connection closed, sleeping out their interval; they hold nothing.
var idleCleaners = []string{"fasthttp.(*HostClient).connsCleaner", "fasthttp.(*Client).mCleaner", "fasthttp.(*workerPool).Start.func2"}

// countGoroutines counts the goroutines other than fasthttp's idle
// cleaners, and returns their stacks.
func countGoroutines() (int, string) {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var keep []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		idle := false
		for _, name := range idleCleaners {
			idle = idle || strings.Contains(g, name)
		}
		if !idle {
			keep = append(keep, g)
		}
	}
	return len(keep), strings.Join(keep, "\n\n")
}
