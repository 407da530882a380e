package openai

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// respSeeds adds the named testdata/responses files to f's corpus.
func respSeeds(f *testing.F, names ...string) {
	for _, name := range names {
		b, err := os.ReadFile("testdata/responses/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzResponsesDecodeRequest: any JSON body read as a Responses request
// and written back as one never panics and always writes valid JSON.
func FuzzResponsesDecodeRequest(f *testing.F) {
	respSeeds(f, "codex_request.json")
	f.Add([]byte(`{"model":"m","input":"hi","instructions":"x\ny"}`))
	f.Add([]byte(`{"input":[{"type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b\"c"}],"encrypted_content":"e"},{"type":"function_call","namespace":"ns","name":"f","arguments":{"a":1},"call_id":"c"}],"tools":[{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f"}]}]}`))
	f.Add([]byte(`{"input":[{"role":"user","content":[{"type":"input_image","image_url":{"url":"data:image/png;base64,AA=="}}]},{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"https://x"}]}],"text":{"format":{"type":"json_schema","schema":{}}},"reasoning":{"effort":"xhigh"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return // the server rejects invalid JSON before any reader runs
		}
		var r codec.Request
		if err := DecodeResponsesRequest(&r, body); err != nil {
			return
		}
		out, err := AppendResponsesRequest(nil, &r, []byte("m"))
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON written for %s:\n%s", body, out)
		}
	})
}

// FuzzResponsesDecoder: any SSE input through ResponsesDecoder and then
// ResponsesEncoder never panics, and whenever the encoder finished (the
// upstream stream was complete or failed), its output passes
// CheckResponsesStream.
func FuzzResponsesDecoder(f *testing.F) {
	respSeeds(f, "upstream_stream.sse")
	f.Add([]byte("data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"custom_tool_call\",\"call_id\":\"c\",\"name\":\"apply_patch\",\"input\":\"x\\n\"}}\n\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow\"}\n\n"))
	f.Add([]byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":3,\"delta\":\"a\\\"b\"}\n\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"summary_index\":2,\"delta\":\"t\"}\n\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":3,\"delta\":\"{\"}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1}}}\n\n"))
	req := &codec.Request{Model: []byte("m"), Tools: []codec.Tool{{Kind: codec.ToolCustom, Name: []byte("apply_patch")}}}
	f.Fuzz(func(t *testing.T, stream []byte) {
		for _, streaming := range []bool{true, false} {
			out, done := respFuzzTranslate(stream, req, streaming)
			if !done {
				continue
			}
			if streaming {
				if err := CheckResponsesStream(out); err != nil {
					t.Fatalf("CheckResponsesStream: %v\ninput:\n%s\noutput:\n%s", err, stream, out)
				}
			} else if !gjson.ValidBytes(out) {
				t.Fatalf("invalid body:\n%s", out)
			}
		}
	})
}

func respFuzzTranslate(stream []byte, req *codec.Request, streaming bool) ([]byte, bool) {
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var d ResponsesDecoder
	var e ResponsesEncoder
	e.Reset(req, streaming)
	var out []byte
	var evs []codec.Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) || err != nil {
			return out, e.Done()
		}
		if evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data); err != nil {
			return out, false
		}
		for i := range evs {
			out = e.Append(out, &evs[i])
		}
	}
}
