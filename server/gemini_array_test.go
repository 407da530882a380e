package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"slipstream/codec/gemini"
)

// geminiArrayConfig routes gemini-* to a Gemini upstream (same dialect),
// claude-* to an Anthropic one (translated) and mock-* to the mock.
const geminiArrayConfig = `
providers:
  - {name: gem, kind: gemini, base_url: "${UP}", keys: [sk-gem], models: ["gemini-*"]}
  - {name: anth, kind: anthropic, base_url: "${UP}", keys: [sk-ant], models: ["claude-*"]}
  - {name: m, kind: mock, models: ["mock*"], chunks: 3}
timeouts:
  keepalive: %s
`

const geminiAsk = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`

// geminiUp is an upstream that answers Gemini and Anthropic streams from
// canned SSE and records the query of each Gemini call.
type geminiUp struct {
	mu      sync.Mutex
	queries []string
	gemini  string // the SSE stream of a Gemini call
	anth    string // the SSE stream of an Anthropic call
	delay   time.Duration
}

func (u *geminiUp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	if strings.HasPrefix(r.URL.Path, "/v1beta/") {
		u.queries = append(u.queries, r.URL.RawQuery)
	}
	u.mu.Unlock()
	time.Sleep(u.delay)
	w.Header().Set("Content-Type", "text/event-stream")
	if strings.HasPrefix(r.URL.Path, "/v1beta/") {
		io.WriteString(w, u.gemini)
	} else {
		io.WriteString(w, u.anth)
	}
}

func geminiTestdata(t *testing.T, name string) string {
	b, err := os.ReadFile("../codec/gemini/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGeminiArrayStream: :streamGenerateContent without alt=sse answers
// the JSON-array stream on every path (mock, same dialect, translated,
// after keep-alive pings), streams that end in an error included; with
// alt=sse the answer stays SSE; the upstream is always asked for SSE.
func TestGeminiArrayStream(t *testing.T) {
	t.Parallel()
	anthStream := sameRoutes["anthropic"].stream
	gemStream := geminiTestdata(t, "encoded_stream_text.sse")
	gemEvents := sseData(gemStream)
	f := func(name, model, query, keepalive string, up *geminiUp, check func(t *testing.T, body string)) {
		t.Run(name, func(t *testing.T) {
			u := newUpstream(t, up)
			base, _ := startServer(t, fmt.Sprintf(geminiArrayConfig, keepalive), u.URL)
			resp, err := http.Post(base+"/v1beta/models/"+model+":streamGenerateContent"+query, "application/json", strings.NewReader(geminiAsk))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ct := resp.Header.Get("Content-Type")
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if query == "?alt=sse" {
				if !strings.HasPrefix(ct, "text/event-stream") {
					t.Fatalf("alt=sse answered %q", ct)
				}
			} else {
				if !strings.HasPrefix(ct, "application/json") {
					t.Fatalf("array stream answered Content-Type %q", ct)
				}
				if err := gemini.CheckArrayStream(b); err != nil {
					t.Fatalf("%v\n%s", err, b)
				}
			}
			up.mu.Lock()
			for _, q := range up.queries {
				if q != "alt=sse" {
					t.Errorf("upstream asked with query %q, want alt=sse", q)
				}
			}
			up.mu.Unlock()
			check(t, string(b))
		})
	}
	f("mock", "mock-1", "", "0s", &geminiUp{}, func(t *testing.T, body string) {
		if n := strings.Count(body, `"text":"`); n != 4 || !strings.HasPrefix(body, "[{") || strings.Count(body, ",\r\n") != 3 {
			t.Fatalf("want 3 text elements and a final one: %s", body)
		}
	})
	f("mock_key_param", "mock-1", "?key=x", "0s", &geminiUp{}, func(*testing.T, string) {})
	f("same", "gemini-2.5-flash", "", "0s", &geminiUp{gemini: gemStream}, func(t *testing.T, body string) {
		if want := "[" + strings.Join(gemEvents, ",\r\n") + "]"; body != want {
			t.Fatalf("same-dialect array:\n got %q\nwant %q", body, want)
		}
	})
	f("same_sse", "gemini-2.5-flash", "?alt=sse", "0s", &geminiUp{gemini: gemStream}, func(t *testing.T, body string) {
		if body != gemStream {
			t.Fatalf("alt=sse is not relayed verbatim: %q", body)
		}
	})
	f("translated", "claude-x", "", "0s", &geminiUp{anth: anthStream}, func(t *testing.T, body string) {
		if !strings.Contains(body, `"text":"Hi"`) || !strings.Contains(body, `"finishReason":"STOP"`) {
			t.Fatalf("translated array: %s", body)
		}
	})
	f("same_truncated", "gemini-2.5-flash", "", "0s", &geminiUp{gemini: "data: " + gemEvents[0] + "\n\n"}, func(t *testing.T, body string) {
		if !strings.HasSuffix(body, `"status":"INTERNAL"}}]`) {
			t.Fatalf("truncated same-dialect array does not end in an error element: %s", body)
		}
	})
	f("translated_truncated", "claude-x", "", "0s", &geminiUp{anth: anthStream[:strings.Index(anthStream, "event: content_block_stop")]}, func(t *testing.T, body string) {
		if !strings.Contains(body, `"error":{"code":502`) {
			t.Fatalf("truncated translated array does not end in an error: %s", body)
		}
	})
	f("malformed_upstream", "gemini-2.5-flash", "", "0s", &geminiUp{gemini: "data: " + gemEvents[0] + "\n\ndata: {\"candidates\":[\n\n"}, func(t *testing.T, body string) {
		if !strings.Contains(body, "malformed event") {
			t.Fatalf("malformed upstream event: %s", body)
		}
	})
	f("after_pings", "gemini-2.5-flash", "", "20ms", &geminiUp{gemini: gemStream, delay: 120 * time.Millisecond}, func(t *testing.T, body string) {
		if !strings.HasPrefix(body, "\n") || !strings.HasSuffix(body, strings.Join(gemEvents, ",\r\n")+"]") {
			t.Fatalf("array after keep-alive pings: %q", body)
		}
	})
}

// sseData returns the data of each event of an SSE stream.
func sseData(stream string) []string {
	var out []string
	for _, ev := range strings.Split(strings.ReplaceAll(stream, "\r\n", "\n"), "\n\n") {
		if d, ok := strings.CutPrefix(ev, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestGeminiArrayElementsNotBatched: the upstream sends one event, then
// waits until the client has read its element before sending the next.
func TestGeminiArrayElementsNotBatched(t *testing.T) {
	t.Parallel()
	events := sseData(geminiTestdata(t, "encoded_stream_text.sse"))
	seen := make(chan int)
	u := newUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, ev := range events {
			io.WriteString(w, "data: "+ev+"\n\n")
			w.(http.Flusher).Flush()
			select {
			case got := <-seen:
				if got != i {
					return
				}
			case <-time.After(5 * time.Second):
				return
			}
		}
	}))
	base, _ := startServer(t, fmt.Sprintf(geminiArrayConfig, "0s"), u.URL)
	resp, err := http.Post(base+"/v1beta/models/gemini-x:streamGenerateContent", "application/json", strings.NewReader(geminiAsk))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []byte
	buf := make([]byte, 4096)
	for i, ev := range events {
		deadline := time.AfterFunc(3*time.Second, func() { resp.Body.Close() })
		for !bytes.Contains(got, []byte(ev)) {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Fatalf("element %d never came alone: %v (so far %q)", i, err, got)
			}
		}
		deadline.Stop()
		seen <- i
	}
	rest, _ := io.ReadAll(resp.Body)
	if err := gemini.CheckArrayStream(append(got, rest...)); err != nil {
		t.Fatal(err)
	}
}
