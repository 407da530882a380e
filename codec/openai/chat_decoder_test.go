package openai

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

var chatUpdate = flag.Bool("chat.update", false, "rewrite the Chat golden files in testdata/chat")

// chatGolden compares got with testdata/chat/name, or writes it with
// -chat.update (review the diff by eye before committing).
func chatGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "chat", name)
	if *chatUpdate {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("cannot read golden file: %v (run with -chat.update)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// chatDecodeStream runs a whole SSE stream through d and returns the Events
// dumped as text.
func chatDecodeStream(t *testing.T, d *ChatDecoder, stream []byte) string {
	t.Helper()
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var b strings.Builder
	var evs []codec.Event
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data)
		if err != nil {
			t.Fatalf("DecodeEvent(%s): %v", ev.Data, err)
		}
		for i := range evs {
			chatDumpEvent(&b, &evs[i])
		}
	}
}

func chatReadTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "chat", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestChatDecoderStream(t *testing.T) {
	var d ChatDecoder
	f := func(name string) {
		t.Helper()
		d.Reset()
		got := chatDecodeStream(t, &d, chatReadTestdata(t, name+".sse"))
		chatGolden(t, name+".events", got)
	}
	f("stream_text")
	f("stream_tools")
	f("stream_reasoning")
	f("stream_error")
	f("stream_compat")
}

func TestChatDecoderBody(t *testing.T) {
	var d ChatDecoder
	f := func(name string) {
		t.Helper()
		d.Reset()
		evs, err := d.DecodeBody(nil, chatReadTestdata(t, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i := range evs {
			chatDumpEvent(&b, &evs[i])
		}
		chatGolden(t, name+".events", b.String())
	}
	f("body_text")
	f("body_tools")
	f("body_error")
}

func TestChatDecoderEdges(t *testing.T) {
	f := func(events []string, want string) {
		t.Helper()
		var d ChatDecoder
		var b strings.Builder
		var evs []codec.Event
		for _, data := range events {
			var err error
			evs, err = d.DecodeEvent(evs[:0], nil, []byte(data))
			if err != nil {
				b.WriteString("err " + err.Error() + "\n")
				continue
			}
			for i := range evs {
				chatDumpEvent(&b, &evs[i])
			}
		}
		if got := b.String(); got != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
	}
	// [DONE] alone still yields a complete sequence; later events are ignored.
	f([]string{"[DONE]", `{"choices":[{"delta":{"content":"x"}}]}`}, "start block=0\nfinish block=0 stop=1\nend block=0\n")
	// Malformed JSON is an error; blank data is skipped.
	f([]string{"{", "  "}, "err malformed chat completion chunk\n")
	// Content after the finish is dropped; a finish with tool calls is tool use.
	f([]string{
		`{"id":"x","choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"n"}}]}}]}`,
		`{"id":"x","choices":[{"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"x","choices":[{"delta":{"content":"late"}}]}`,
		`[DONE]`,
	}, "start block=0 id=x name=\ncall block=0 id=c name=n\nfinish block=0 stop=4\nend block=0\n")
	// A bare string error and a rate-limit error.
	f([]string{`{"error":"boom"}`}, "error block=0 status=500 kind=6 code= msg=boom\n")
	f([]string{`{"error":{"message":"slow down","type":"rate_limit_exceeded","code":429}}`}, "error block=0 status=429 kind=5 code= msg=slow down\n")
}

func TestChatDecoderOtherChoice(t *testing.T) {
	var d ChatDecoder
	evs, err := d.DecodeEvent(nil, nil, []byte(`{"id":"x","choices":[{"index":1,"delta":{"content":"other"},"finish_reason":"stop"}]}`))
	if err != nil || len(evs) != 1 || evs[0].Kind != codec.EventStart {
		t.Fatalf("choice 1 must be skipped: %v %+v", err, evs)
	}
}
