package openai

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// chatSeeds adds every testdata/chat file matching pattern to f's corpus.
func chatSeeds(f *testing.F, pattern string) {
	paths, err := filepath.Glob(filepath.Join("testdata", "chat", pattern))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzChatDecodeRequest: any valid JSON body is read without panic, and a
// body that reads is written as valid JSON.
func FuzzChatDecodeRequest(f *testing.F) {
	chatSeeds(f, "request_*.json")
	f.Add([]byte(`{"messages":[{"role":"tool","content":[{"type":"image_url","image_url":"data:image/png;base64,AA"}]},{"role":"user","content":""}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"type":"custom","custom":{"input":"a\"b"}},{"function":{"arguments":{"a":[1, 2]}}}]}]}`))
	var r codec.Request
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		r.Reset()
		if err := DecodeChatRequest(&r, body); err != nil {
			return
		}
		out, err := AppendChatRequest(nil, &r, []byte("m"))
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON written:\n%s\nfrom:\n%s", out, body)
		}
	})
}

// FuzzChatDecoder: any bytes, read as an upstream SSE stream, go through
// ChatDecoder and ChatEncoder without panic, and the client stream, ended
// the way translate.Stream ends it (error event on a malformed chunk or a
// missing terminal event), passes CheckChatStream.
func FuzzChatDecoder(f *testing.F) {
	chatSeeds(f, "stream_*.sse")
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"x\"}}]}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"id\":\"a\\\"b\",\"choices\":[{\"delta\":{\"content\":\"\\u00e9\"},\"finish_reason\":\"length\"}]}\n\n"))
	var d ChatDecoder
	var e ChatEncoder
	req := &codec.Request{Model: []byte("client"), Created: 1, IncludeUsage: true}
	f.Fuzz(func(t *testing.T, stream []byte) {
		out := chatFuzzTranscode(&d, &e, req, stream)
		if err := CheckChatStream(out); err != nil {
			t.Fatalf("CheckChatStream: %v\ninput:\n%q\noutput:\n%s", err, stream, out)
		}
	})
}

func chatFuzzTranscode(d *ChatDecoder, e *ChatEncoder, req *codec.Request, stream []byte) []byte {
	d.Reset()
	e.Reset(req, true)
	var rd sse.Reader
	rd.MaxEvent = 1 << 20
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var out []byte
	var evs []codec.Event
	fail := codec.Event{Kind: codec.EventError, Err: codec.Error{Status: 502, Kind: codec.ErrAPI, Message: []byte("bad upstream")}}
	for !e.Done() {
		ev, err := rd.Next()
		if err != nil {
			if err != io.EOF {
				return e.Append(out, &fail)
			}
			break
		}
		evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data)
		if err != nil {
			return e.Append(out, &fail)
		}
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
	}
	if !e.Done() {
		out = e.Append(out, &fail)
	}
	return out
}
