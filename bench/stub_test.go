package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkGrammar checks an SSE stream: events separated by blank lines,
// each one optional `event:` line and one `data:` line holding JSON (or
// [DONE] for chat), the event name equal to the JSON type, and the
// dialect's terminal event last.
func checkGrammar(t *testing.T, d Dialect, body []byte) {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n\n")) {
		t.Fatalf("%s: stream does not end with a blank line", d)
	}
	events := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	for _, ev := range events {
		lines := strings.Split(ev, "\n")
		name := ""
		if n, ok := strings.CutPrefix(lines[0], "event: "); ok {
			name, lines = n, lines[1:]
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "data: ") {
			t.Fatalf("%s: bad event %q", d, ev)
		}
		data := strings.TrimPrefix(lines[0], "data: ")
		if data == "[DONE]" && d == Chat {
			continue
		}
		var v struct{ Type string }
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("%s: data is not JSON: %q", d, data)
		}
		needName := d == Anthropic || d == Responses
		if needName && (name == "" || name != v.Type) {
			t.Fatalf("%s: event name %q vs type %q", d, name, v.Type)
		}
	}
	last := events[len(events)-1]
	want := map[Dialect]string{Chat: "data: [DONE]", Responses: "event: response.completed", Anthropic: "event: message_stop", Gemini: `"finishReason":"STOP"`}[d]
	if !strings.Contains(last, want) {
		t.Fatalf("%s: last event %q lacks %q", d, last, want)
	}
}

func post(t *testing.T, url string, d Dialect, body []byte) (int, []byte, time.Duration) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	d.SetHeaders(req.Header)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, time.Since(start)
}

func TestStubAnswersEveryDialectGrammatically(t *testing.T) {
	s := NewStub(StubConfig{Events: 5})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := func(d Dialect, build func([]byte, BodyOpts) []byte, stream bool) {
		t.Helper()
		body := build(nil, BodyOpts{Model: "m", Size: 4000, Seed: 1, Stream: stream})
		code, got, _ := post(t, s.URL()+d.Path("m", stream), d, body)
		if code != 200 || !d.Complete(got, stream) {
			t.Fatalf("%s stream=%v: %d %q", d, stream, code, tail(got))
		}
		if stream {
			checkGrammar(t, d, got)
			if d.Complete(got[:len(got)-40], true) {
				t.Fatalf("%s: a truncated stream must not count as complete", d)
			}
		} else if !json.Valid(got) {
			t.Fatalf("%s: single body is not JSON", d)
		}
	}
	for _, stream := range []bool{false, true} {
		f(Chat, AppendChatBody, stream)
		f(Responses, AppendResponsesBody, stream)
		f(Anthropic, AppendClaudeBody, stream)
		f(Gemini, AppendGeminiBody, stream)
	}
	f(CountTokens, func(dst []byte, o BodyOpts) []byte { o.CountTokens = true; return AppendClaudeBody(dst, o) }, false)
	if s.Requests() != 9 {
		t.Fatalf("stub counted %d requests, want 9", s.Requests())
	}
}

func TestStubPacesEvents(t *testing.T) {
	s := NewStub(StubConfig{Events: 4, Delay: 20 * time.Millisecond})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := AppendClaudeBody(nil, BodyOpts{Model: "m", Size: 4000, Seed: 1, Stream: true})
	_, got, took := post(t, s.URL()+"/v1/messages", Anthropic, body)
	checkGrammar(t, Anthropic, got)
	if took < 60*time.Millisecond {
		t.Fatalf("paced stream of 4 events at 20 ms took only %v", took)
	}
}
