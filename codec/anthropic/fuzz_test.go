package anthropic

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

// addSeeds adds every testdata file matching pattern to f's corpus, so the
// seeds run under plain go test.
func addSeeds(f *testing.F, pattern string) {
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeRequest: any valid JSON body either is rejected with an error
// or translates back to valid JSON, without panicking.
func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f, "request_*.json")
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a.b","content":[{"type":"image","source":{"type":"url","url":"data:image/png;base64,AAAA"}}]}]}],"temperature":7,"thinking":{"type":"enabled","budget_tokens":99999999}}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"","name":"x","input":"str"}]},{"role":"system","content":"s"}],"tool_choice":{"type":"any","disable_parallel_tool_use":false}}`))
	var r codec.Request
	var out []byte
	f.Fuzz(func(t *testing.T, body []byte) {
		if !gjson.ValidBytes(body) {
			return
		}
		r.Reset()
		if err := DecodeRequest(&r, body); err != nil {
			return
		}
		var err error
		out, err = AppendRequest(out[:0], &r, []byte("m"))
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON for %s:\n%s", body, out)
		}
	})
}

// FuzzDecoder: any SSE input goes through Decoder and Encoder without
// panicking; when the input is a valid Anthropic stream, so is the output
// (and the non-streamed body is valid JSON unless an error cut it short:
// Encoder documents that the caller discards such a body).
func FuzzDecoder(f *testing.F) {
	addSeeds(f, "*.sse")
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\nevent: message_stop\ndata: {}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"boom\"}}\n\n"))
	var d Decoder
	var e Encoder
	var evs []codec.Event
	var out []byte
	f.Fuzz(func(t *testing.T, stream []byte) {
		valid := CheckStream(stream) == nil
		for _, mode := range [...]bool{true, false} {
			d.Reset()
			e.Reset(clientReq, mode)
			out = out[:0]
			failed, sawErr := false, false
			for _, raw := range splitSSE(t, stream) {
				var err error
				evs, err = d.DecodeEvent(evs[:0], raw.name, raw.data)
				if err != nil {
					failed = true
					break
				}
				for i := range evs {
					sawErr = sawErr || evs[i].Kind == codec.EventError
					out = e.Append(out, &evs[i])
				}
			}
			if !valid || failed {
				continue
			}
			if mode {
				if err := CheckStream(out); err != nil {
					t.Fatalf("output of a valid stream is invalid: %v\ninput:\n%s\noutput:\n%s", err, stream, out)
				}
			} else if e.Done() && !sawErr && !gjson.ValidBytes(out) {
				t.Fatalf("invalid body for a valid stream:\n%s\noutput:\n%s", stream, out)
			}
		}
	})
}
