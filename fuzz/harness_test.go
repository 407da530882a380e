package fuzz

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"slipstream/chaos"
	"slipstream/codec"
	"slipstream/internal/testkit"
	"slipstream/server"
	"slipstream/server/config"
)

// Ownership is checked strictly, as in the server's own tests.
func init() { server.CheckOwnershipStrictly() }

// The key every fuzz request uses. It may use only models named fz-*-ok;
// each upstream dialect serves fz-<dialect>-*.
const (
	fuzzKey     = "sk-fuzz-client-93b1"
	providerKey = "sk-fuzz-provider-5e27"
)

// dialectTag names each upstream dialect in model names.
var dialectTag = map[codec.Dialect]string{
	codec.DialectChat:      "chat",
	codec.DialectResponses: "resp",
	codec.DialectAnthropic: "anth",
	codec.DialectGemini:    "gem",
}

// allowed reports whether the key may use model (the upstream name).
func allowed(model string) bool {
	return strings.HasPrefix(model, "fz-") && strings.HasSuffix(model, "-ok")
}

// script is how the stub upstreams answer the current input.
type script struct {
	mode   uint8  // see answer
	chunks []byte // write sizes, cycled (each byte + 1)
	noise  []byte // garbage, text and cut offsets drawn from it
}

// harness is one slipstream with four stub upstreams, shared by every
// input of a fuzz process (inputs run one at a time in a process).
type harness struct {
	base   string
	ups    map[codec.Dialect]*chaos.Upstream
	client *http.Client
	log    lockedBuf

	mu  sync.Mutex
	cur script
}

var (
	hOnce sync.Once
	h     *harness
	hErr  error
)

// getHarness starts the shared harness on first use.
func getHarness(t testing.TB) *harness {
	hOnce.Do(func() { h, hErr = startHarness() })
	if hErr != nil {
		t.Fatal(hErr)
	}
	return h
}

func startHarness() (*harness, error) {
	hs := &harness{ups: map[codec.Dialect]*chaos.Upstream{}}
	var providers strings.Builder
	for _, d := range chaos.Dialects {
		up, err := chaos.NewUpstream(func(r *chaos.Request, c *chaos.Conn) bool { return hs.answer(d, r, c) }, 0)
		if err != nil {
			return nil, err
		}
		hs.ups[d] = up
		providers.WriteString(chaos.ProviderYAML(dialectTag[d], d, up.URL(), "fz-"+dialectTag[d]+"-*", providerKey))
	}
	yml := "keys:\n  - {name: fuzz, key: " + fuzzKey + ", models: [\"fz-*-ok\"]}\n" +
		"providers:\n" + providers.String() +
		"aliases:\n  fz-alias-ok: gem/fz-gem-ok\n  fz-alias2-ok: anth/fz-anth-ok\n" +
		"limits: {max_body_bytes: 1MiB}\n" +
		"timeouts: {connect: 5s, first_byte: 2s, idle: 1s, keepalive: 0s}\n" + // connect: a loaded machine can starve a loopback dial past 1s
		"log: {access: true}\n"
	cfg, err := config.Parse([]byte(yml), testkit.Env())
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	srv, err := server.New(cfg, server.Options{Log: &hs.log})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go srv.Serve(ln)
	hs.base = "http://" + ln.Addr().String()
	hs.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	return hs, nil
}

// lockedBuf is a log sink that keeps only its last 64 KiB.
type lockedBuf struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if len(l.b) > 64<<10 {
		l.b = append(l.b[:0], l.b[len(l.b)-32<<10:]...)
	}
	return len(p), nil
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// setScript sets how the upstreams answer from now on.
func (hs *harness) setScript(s script) {
	hs.mu.Lock()
	hs.cur = s
	hs.mu.Unlock()
}

// Upstream answer modes.
const (
	modeGood      = iota // a good reply
	modeTruncated        // a stream ends cleanly after some events; a body is cut (FIN) inside its Content-Length
	modeCutEvent         // a stream ends (FIN) inside an event
	modeGarbage          // noise spliced into the reply
	modeError            // the dialect's error object with a 4xx/5xx
	modeHTML             // an HTML 502
	numModes
)

// answer is every stub upstream's handler: it answers r as the current
// script says, in dialect d, streaming when r asked to. Every answer
// closes its connection, so no input meets a connection an earlier one
// left in slipstream's pool: an input fails or passes the same way alone
// and in a run (reused connections are the chaos suite's business).
func (hs *harness) answer(d codec.Dialect, r *chaos.Request, c *chaos.Conn) bool {
	hs.mu.Lock()
	s := hs.cur
	hs.mu.Unlock()
	stream := strings.Contains(r.URI, ":streamGenerateContent") || gjson.GetBytes(r.Body, "stream").Bool()
	model := upstreamModel(d, r)
	words := wordsOf(s.noise)
	var body []byte
	if stream {
		body = chaos.Stream(chaos.ReplyEvents(d, model, words))
	} else {
		body = chaos.ReplyBody(d, model, words)
	}
	ct := "application/json"
	if stream {
		ct = "text/event-stream"
	}
	cut := len(body)
	if len(s.noise) > 0 {
		cut = int(s.noise[0]) * len(body) / 256
	}
	switch s.mode % numModes {
	case modeError:
		status := []int{400, 401, 403, 404, 429, 500, 503, 529}[int(s.chunks0())%8]
		c.Reply(status, "application/json", errorBody(d, status), "Connection", "close")
		return false
	case modeHTML:
		c.Reply(502, "text/html", []byte("<html><body><h1>502 Bad Gateway</h1></body></html>"), "Connection", "close")
		return false
	case modeGarbage:
		body = append(append(append([]byte{}, body[:cut]...), s.noise...), body[cut:]...)
	case modeTruncated:
		if stream {
			body = body[:eventBoundary(body, cut)]
		} else {
			c.Head(200, "Content-Type", ct, "Content-Length", fmt.Sprint(len(body)), "Connection", "close")
			c.Write(body[:cut])
			return false
		}
	case modeCutEvent:
		if !stream {
			c.Head(200, "Content-Type", ct, "Connection", "close")
			c.Write(body[:cut])
			return false
		}
		c.Head(200, "Content-Type", ct, "Connection", "close")
		writeChunked(c, body[:cut], s.chunks, false)
		return false
	}
	if c.Head(200, "Content-Type", ct, "Transfer-Encoding", "chunked", "Connection", "close") != nil {
		return false
	}
	writeChunked(c, body, s.chunks, true)
	return false
}

func (s script) chunks0() byte {
	if len(s.chunks) == 0 {
		return 0
	}
	return s.chunks[0]
}

// writeChunked writes b in pieces sized by sizes (each byte + 1, cycled),
// as HTTP chunks when chunked, else raw.
func writeChunked(c *chaos.Conn, b, sizes []byte, chunked bool) error {
	for i := 0; len(b) > 0; i++ {
		n := len(b)
		if len(sizes) > 0 {
			n = min(n, int(sizes[i%len(sizes)])+1)
		}
		var err error
		if chunked {
			err = c.Chunk(b[:n])
		} else {
			_, err = c.Write(b[:n])
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	if chunked {
		return c.EndChunks()
	}
	return nil
}

// eventBoundary returns the end of the last whole event before cut.
func eventBoundary(stream []byte, cut int) int {
	i := bytes.LastIndex(stream[:cut], []byte("\n\n"))
	if i < 0 {
		return 0
	}
	return i + 2
}

// wordsOf makes the reply's text deltas from noise: arbitrary bytes,
// escaped by the JSON encoder (invalid UTF-8 becomes U+FFFD).
func wordsOf(noise []byte) []string {
	if len(noise) < 2 {
		return chaos.Words
	}
	half := len(noise) / 2
	return []string{"alpha " + string(noise[:half]), " beta " + string(noise[half:]), " gamma"}
}

// errorBody is an upstream error object of dialect d.
func errorBody(d codec.Dialect, status int) []byte {
	switch d {
	case codec.DialectAnthropic:
		return []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"upstream says no"}}`)
	case codec.DialectGemini:
		return []byte(fmt.Sprintf(`{"error":{"code":%d,"message":"upstream says no","status":"RESOURCE_EXHAUSTED"}}`, status))
	}
	return []byte(`{"error":{"message":"upstream says no","type":"rate_limit_error","param":null,"code":null}}`)
}

// upstreamModel is the model an upstream request names: the Gemini path
// segment, or the body's model member.
func upstreamModel(d codec.Dialect, r *chaos.Request) string {
	if d == codec.DialectGemini {
		rest := r.URI[strings.Index(r.URI, "/models/")+len("/models/"):]
		m, _, _ := strings.Cut(rest, ":")
		return m
	}
	return gjson.GetBytes(r.Body, "model").String()
}

// upstreamModels returns every model a provider would read from r: the
// Gemini path's (Gemini binds the model from the path), or each top-level
// member of the body whose unescaped name is "model" (a provider's parser
// may take any of them).
func upstreamModels(d codec.Dialect, r *chaos.Request) []string {
	var out []string
	if d == codec.DialectGemini {
		return append(out, upstreamModel(d, r))
	}
	// gjson reads past what a strict parser refuses (a raw control
	// character in a string, which slipstream leaves to the provider), so
	// no model member hides behind such a byte.
	gjson.ParseBytes(r.Body).ForEach(func(k, v gjson.Result) bool {
		if k.String() == "model" {
			if v.Type == gjson.String {
				out = append(out, v.String())
			} else {
				out = append(out, v.Raw)
			}
		}
		return true
	})
	return out
}

// exchange sends one request and returns the reply and the upstream
// requests it caused.
func (hs *harness) exchange(t *testing.T, path string, hdr http.Header, body []byte) (*chaos.Reply, map[codec.Dialect][]*chaos.Request) {
	before := map[codec.Dialect]int{}
	for d, up := range hs.ups {
		before[d] = len(up.Requests())
	}
	req, err := http.NewRequest("POST", hs.base+path, bytes.NewReader(body))
	if err != nil {
		t.Skip("not a request") // a path the client library refuses
	}
	req.Header = hdr
	r := &chaos.Reply{}
	resp, err := hs.client.Do(req)
	if err != nil {
		r.DoErr = err
	} else {
		r.Status, r.Header = resp.StatusCode, resp.Header
		r.Body, r.ReadErr = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	got := map[codec.Dialect][]*chaos.Request{}
	for d, up := range hs.ups {
		got[d] = up.Requests()[before[d]:]
	}
	return r, got
}

// checkAlive fails when slipstream stopped answering.
func (hs *harness) checkAlive(t *testing.T) {
	resp, err := hs.client.Get(hs.base + "/healthz")
	if err != nil {
		t.Fatalf("slipstream is gone: %v\nlog:\n%s", err, hs.log.String())
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// checkSecrets fails when a key reached the log or the client.
func (hs *harness) checkSecrets(t *testing.T, r *chaos.Reply) {
	for _, k := range []string{fuzzKey, providerKey} {
		if strings.Contains(hs.log.String(), k) || bytes.Contains(r.Body, []byte(k)) {
			t.Fatalf("a key reached the log or the client\nlog:\n%s\nreply: %q", hs.log.String(), clip(r.Body))
		}
	}
}

// checkAllowList fails when an upstream received a model the key may not
// use.
func checkAllowList(t *testing.T, reqs map[codec.Dialect][]*chaos.Request, clientBody []byte) {
	for d, rs := range reqs {
		for _, r := range rs {
			for _, m := range upstreamModels(d, r) {
				if !allowed(m) {
					t.Fatalf("allow-list bypass: the %v upstream received model %q\nclient body: %q\nupstream %s body: %q",
						d, m, clip(clientBody), r.URI, clip(r.Body))
				}
			}
		}
	}
}

func clip(b []byte) []byte {
	if len(b) > 600 {
		return append(b[:600:600], "..."...)
	}
	return b
}
