package translate

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// fileNames are the dialect names used in testdata file names.
var fileNames = [codec.NumDialects]string{
	codec.DialectAnthropic: "anthropic",
	codec.DialectChat:      "chat",
	codec.DialectResponses: "responses",
	codec.DialectGemini:    "gemini",
}

// allDialects lists the translatable dialects in table order.
var allDialects = []codec.Dialect{codec.DialectAnthropic, codec.DialectChat, codec.DialectResponses, codec.DialectGemini}

// upstreamModels is the (escaped) model name written into upstream
// requests of each dialect, as a route would map it.
var upstreamModels = [codec.NumDialects][]byte{
	codec.DialectAnthropic: []byte("claude-sonnet-4-5"),
	codec.DialectChat:      []byte("gpt-4.1"),
	codec.DialectResponses: []byte("gpt-5"),
	codec.DialectGemini:    []byte("gemini-2.5-flash"),
}

// testCreated is the Created stamp every test request carries, so that
// goldens are stable.
const testCreated = 1767225600

// pair is one ordered (client, upstream) translation.
type pair struct{ client, upstream codec.Dialect }

func (p pair) String() string { return fileNames[p.client] + "_to_" + fileNames[p.upstream] }

// pairs returns the 12 ordered pairs of distinct dialects.
func pairs() []pair {
	var ps []pair
	for _, c := range allDialects {
		for _, u := range allDialects {
			if c != u {
				ps = append(ps, pair{c, u})
			}
		}
	}
	return ps
}

// streamsReady reports whether p's stream translation is wired, the
// client's checker included.
func streamsReady(p pair) bool {
	return streamsWired(p.client) && streamsWired(p.upstream) && dialects[p.client].checkStream != nil
}

// requestsReady reports whether p's request translation is wired.
func requestsReady(p pair) bool { return requestsWired(p.client) && requestsWired(p.upstream) }

// readFile returns testdata/<path>, or nil when it does not exist.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("cannot read %s: %s", path, err)
	}
	return b
}

// decodeClient reads testdata/scenarios/<scenario>/request.<client>.json
// into a fresh Request stamped as the server would (Created, and the model
// from the URL for Gemini).
func decodeClient(t testing.TB, scenario string, client codec.Dialect) (*codec.Request, []byte) {
	t.Helper()
	body := readFile(t, "scenarios/"+scenario+"/request."+fileNames[client]+".json")
	if body == nil {
		t.Fatalf("%s: no request.%s.json", scenario, fileNames[client])
	}
	r := new(codec.Request)
	if err := DecodeRequest(client, r, body); err != nil {
		t.Fatalf("%s: cannot decode %s request: %s", scenario, client, err)
	}
	stamp(r, client)
	return r, body
}

// stamp sets what the server sets on a decoded request.
func stamp(r *codec.Request, client codec.Dialect) {
	r.Created = testCreated
	if client == codec.DialectGemini && len(r.Model) == 0 {
		r.Model = []byte("gemini-2.5-flash")
	}
}

// sseEvent is one upstream event of a fixture.
type sseEvent struct{ name, data []byte }

// readEvents splits an SSE fixture into events (copies, comments skipped).
func readEvents(t testing.TB, stream []byte) []sseEvent {
	t.Helper()
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var evs []sseEvent
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("cannot read SSE fixture: %s", err)
		}
		if ev.IsComment() {
			continue
		}
		evs = append(evs, sseEvent{clone(ev.Name), clone(ev.Data)})
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// translateStream runs the upstream events through a Stream for p and
// returns the client bytes (AppendEnd included).
func translateStream(t testing.TB, p pair, r *codec.Request, evs []sseEvent) []byte {
	t.Helper()
	s := AcquireStream(p.client, p.upstream, r, true)
	defer ReleaseStream(s)
	var out []byte
	for i, ev := range evs {
		var err error
		out, err = s.AppendEvent(out, ev.name, ev.data)
		if err != nil {
			t.Fatalf("%s: upstream event %d: %s", p, i, err)
		}
	}
	return s.AppendEnd(out)
}

// translateBody runs a non-streamed upstream body through a Stream for p.
func translateBody(t testing.TB, p pair, r *codec.Request, body []byte) []byte {
	t.Helper()
	s := AcquireStream(p.client, p.upstream, r, false)
	defer ReleaseStream(s)
	out, err := s.AppendBody(nil, body)
	if err != nil {
		t.Fatalf("%s: cannot translate body: %s", p, err)
	}
	out = s.AppendEnd(out)
	if !s.Done() {
		t.Fatalf("%s: body translated but output not done", p)
	}
	return out
}
