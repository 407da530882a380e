package gemini

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"slipstream/codec"
)

// toArray frames stream through an ArrayStream, fed in pieces of n bytes.
func toArray(stream []byte, n int) []byte {
	var a ArrayStream
	var out []byte
	for len(stream) > 0 {
		k := min(n, len(stream))
		out = a.AppendSSE(out, stream[:k])
		stream = stream[k:]
	}
	return a.AppendClose(out)
}

// sseDataOf returns the data of each event of a testdata stream.
func sseDataOf(stream []byte) [][]byte {
	var out [][]byte
	for _, ev := range bytes.Split(bytes.ReplaceAll(stream, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
		if d, ok := bytes.CutPrefix(ev, []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestArrayStreamFraming: every Gemini SSE stream in testdata becomes the
// same array whatever the write sizes, passes the array grammar, and holds
// each event's data as one element, in order.
func TestArrayStreamFraming(t *testing.T) {
	for _, name := range []string{"encoded_stream_text.sse", "encoded_stream_tool.sse", "encoded_stream_thinking.sse", "encoded_stream_error.sse", "encoded_stream_safety.sse", "stream_text.sse", "stream_tool.sse"} {
		sse := readTestdata(t, name)
		want := toArray(sse, len(sse))
		// The decoder's inputs (stream_*) are not all what slipstream emits.
		if err := CheckArrayStream(want); err != nil && strings.HasPrefix(name, "encoded_") {
			t.Fatalf("%s: %v\n%s", name, err, want)
		}
		events := sseDataOf(readTestdata(t, name))
		if wantLit := "[" + string(bytes.Join(events, []byte(",\r\n"))) + "]"; string(want) != wantLit {
			t.Fatalf("%s: framing\n got %q\nwant %q", name, want, wantLit)
		}
		for _, n := range []int{1, 2, 3, 7, 64} {
			if got := toArray(sse, n); !bytes.Equal(got, want) {
				t.Fatalf("%s in %d-byte writes:\n got %q\nwant %q", name, n, got, want)
			}
		}
		// CRLF and CR-only separators frame the same.
		for _, sep := range []string{"\r\n", "\r"} {
			alt := bytes.ReplaceAll(bytes.ReplaceAll(sse, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte(sep))
			for _, n := range []int{1, 5, len(alt)} {
				if got := toArray(alt, n); !bytes.Equal(got, want) {
					t.Fatalf("%s with %q separators in %d-byte writes:\n got %q\nwant %q", name, sep, n, got, want)
				}
			}
		}
	}
}

// TestArrayStreamErrors: streams that fail still make one well-formed
// JSON array, ending with an error element.
func TestArrayStreamErrors(t *testing.T) {
	ok := `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"index":0}],"modelVersion":"m","responseId":"r"}` + "\n\n"
	f := func(what string, build func(a *ArrayStream) []byte, wantErr string) {
		t.Helper()
		var a ArrayStream
		out := build(&a)
		out = a.AppendClose(out)
		var v []map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: not a JSON array of objects: %v\n%s", what, err, out)
		}
		if err := CheckArrayStream(out); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
		if !strings.Contains(string(out), wantErr) {
			t.Fatalf("%s: want %q in %s", what, wantErr, out)
		}
	}
	e := codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("upstream stream ended before its terminal event")}
	f("truncated after one event", func(a *ArrayStream) []byte {
		return a.AppendError(a.AppendSSE(nil, []byte(ok)), &e)
	}, `"status":"INTERNAL"`)
	f("error before any event", func(a *ArrayStream) []byte { return a.AppendError(nil, &e) }, `"code":502`)
	f("malformed upstream event", func(a *ArrayStream) []byte {
		return a.AppendSSE(nil, []byte(ok+"data: {\"candidates\":[}\n\n"+ok))
	}, "malformed event")
	f("not an object", func(a *ArrayStream) []byte { return a.AppendSSE(nil, []byte("data: [1]\n\n")) }, "malformed event")
	f("bad string escape", func(a *ArrayStream) []byte { return a.AppendSSE(nil, []byte("data: {\"a\":\"\\x\"}\n\n")) }, "malformed event")
	f("an error event from the upstream", func(a *ArrayStream) []byte {
		return a.AppendSSE(nil, []byte(ok+`data: {"error":{"code":503,"message":"busy","status":"UNAVAILABLE"}}`+"\n\n"))
	}, `"UNAVAILABLE"`)
	f("pings and an unfinished event", func(a *ArrayStream) []byte {
		b := a.AppendSSE(nil, []byte(": ping\n\n: ping\n\n"+ok))
		b = a.AppendSSE(b, []byte("data: {\"candidates\""))
		return a.AppendError(b, &e)
	}, `"code":502`)

	var a ArrayStream
	if got := string(a.AppendClose(nil)); got != "[]" {
		t.Fatalf("empty stream = %q", got)
	}
	a.Reset()
	if got := string(a.AppendClose(a.AppendSSE(nil, []byte(": ping\n\n")))); got != "\n[]" {
		t.Fatalf("ping only = %q", got)
	}
}

func TestCheckArrayStreamRejects(t *testing.T) {
	good := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},"modelVersion":"m","responseId":"r"}`
	part := `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"index":0}],"modelVersion":"m","responseId":"r"}`
	f := func(stream string) {
		t.Helper()
		if CheckArrayStream([]byte(stream)) == nil {
			t.Fatalf("CheckArrayStream accepted %q", stream)
		}
	}
	if err := CheckArrayStream([]byte("[" + part + ",\r\n" + good + "]")); err != nil {
		t.Fatal(err)
	}
	f("[" + part + "," + good + "]")     // Google's separator is ",\r\n"
	f("[" + part + ",\r\n" + good)       // unterminated
	f("[" + part + "]")                  // no finishReason
	f("[]")                              // nothing
	f("data: " + good + "\n\n")          // SSE, not an array
	f("[" + good + ",\r\n" + good + "]") // an element after the final one
}

// FuzzArrayStream: whatever bytes an upstream sends, split anywhere, the
// array form is one valid JSON array, the same for every split.
func FuzzArrayStream(f *testing.F) {
	addSeeds(f, "*.sse")
	f.Add([]byte("data: {\"a\":1}\r\n\r\ndata: {\"b\":\"\\u00e9\"}\r\r: ping\n\ndata: [1]\n\n"))
	f.Add([]byte("data: {\"a\":\"\\x\"}\n\ndata: {\"ok\":true}\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		whole := toArray(stream, len(stream)+1)
		if !json.Valid(whole) || !bytes.HasSuffix(whole, []byte("]")) {
			t.Fatalf("not one JSON array: %q", whole)
		}
		var v []map[string]any
		if err := json.Unmarshal(whole, &v); err != nil {
			t.Fatalf("elements are not objects: %v: %q", err, whole)
		}
		for _, n := range []int{1, 3} {
			if got := toArray(stream, n); !bytes.Equal(got, whole) {
				t.Fatalf("%d-byte writes frame differently:\n got %q\nwant %q", n, got, whole)
			}
		}
	})
}
