package bench

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StubConfig configures a Stub. The zero value answers instantly with
// 20-delta streams.
type StubConfig struct {
	Events int           // delta events per stream; default 20
	Delay  time.Duration // pause before each delta event; 0 = instant (whole stream in one write)
}

// Stub is a stand-in upstream for the four dialects. It reads each request
// body in full, then answers with a fixed reply in the dialect of the path:
// a single JSON body, or (when the body says "stream":true, or the Gemini
// path is :streamGenerateContent) a grammatical stream ending with the
// dialect's terminal event. Replies are built once at construction.
type Stub struct {
	cfg      StubConfig
	ln       net.Listener
	srv      *http.Server
	bufs     sync.Pool // *bytes.Buffer for request bodies
	replies  [5]stubReply
	requests atomic.Int64
}

// stubReply holds one dialect's prebuilt answers.
type stubReply struct {
	single []byte   // non-streamed JSON body
	events [][]byte // stream events, each with its trailing blank line
	stream []byte   // all events concatenated
}

// NewStub builds a stub; call Start to listen.
func NewStub(cfg StubConfig) *Stub {
	if cfg.Events <= 0 {
		cfg.Events = 20
	}
	s := &Stub{cfg: cfg}
	for d := Chat; d <= CountTokens; d++ {
		s.replies[d] = buildReply(d, cfg.Events)
	}
	s.bufs.New = func() any { return new(bytes.Buffer) }
	return s
}

// Start listens on 127.0.0.1 (an ephemeral port) and serves until Close.
func (s *Stub) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("cannot listen for stub: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return nil
}

// URL returns the stub's base URL, e.g. http://127.0.0.1:41234.
func (s *Stub) URL() string { return "http://" + s.ln.Addr().String() }

// Requests returns the number of requests answered so far.
func (s *Stub) Requests() int64 { return s.requests.Load() }

// Close stops the stub and closes its connections.
func (s *Stub) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// ServeHTTP answers one upstream request.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d, ok := stubDialect(r.URL.Path)
	if !ok || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"stub: no such route"}}`, http.StatusNotFound)
		return
	}
	buf := s.bufs.Get().(*bytes.Buffer)
	defer s.putBuf(buf)
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, `{"error":{"message":"stub: cannot read body"}}`, http.StatusBadRequest)
		return
	}
	s.requests.Add(1)
	if isStream(d, r.URL.Path, buf.Bytes()) {
		s.writeStream(w, &s.replies[d])
		return
	}
	s.writeSingle(w, s.replies[d].single)
}

// putBuf returns a body buffer to the pool unless it grew past 4 MiB.
func (s *Stub) putBuf(b *bytes.Buffer) {
	if b.Cap() > 4<<20 {
		return
	}
	b.Reset()
	s.bufs.Put(b)
}

func (s *Stub) writeSingle(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusOK)
	w.Write(body) //nolint:errcheck // a client that left is not the stub's problem
}

func (s *Stub) writeStream(w http.ResponseWriter, rep *stubReply) {
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	if s.cfg.Delay <= 0 {
		w.Write(rep.stream) //nolint:errcheck // see writeSingle
		return
	}
	for i, ev := range rep.events {
		if i > 0 {
			time.Sleep(s.cfg.Delay)
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

// stubDialect maps an upstream path to its dialect.
func stubDialect(path string) (Dialect, bool) {
	switch path {
	case "/v1/chat/completions":
		return Chat, true
	case "/v1/responses":
		return Responses, true
	case "/v1/messages":
		return Anthropic, true
	case "/v1/messages/count_tokens":
		return CountTokens, true
	}
	if strings.HasPrefix(path, "/v1beta/models/") {
		return Gemini, true
	}
	return 0, false
}

var (
	streamTrue      = []byte(`"stream":true`)
	streamTrueSpace = []byte(`"stream": true`)
)

// isStream reports whether a request asks for a stream. Only the first
// and last 4 KiB are searched: the flag sits near the model (or, in a
// translated body, at the end), and a search of a whole 1 MB body costs
// the stub more than the proxy under test spends. Generated bodies never
// hold the literal elsewhere (text quotes are escaped). A flag the stub
// misses shows up as an incomplete stream, never as a silent pass.
func isStream(d Dialect, path string, body []byte) bool {
	switch d {
	case Gemini:
		return strings.HasSuffix(path, ":streamGenerateContent")
	case CountTokens:
		return false
	}
	const edge = 4 << 10
	if len(body) > 2*edge {
		return hasStreamTrue(body[:edge]) || hasStreamTrue(body[len(body)-edge:])
	}
	return hasStreamTrue(body)
}

func hasStreamTrue(b []byte) bool {
	return bytes.Contains(b, streamTrue) || bytes.Contains(b, streamTrueSpace)
}
