package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// codexFrame is a response.create frame of about size bytes: tools and
// instructions, then a transcript of messages and tool outputs.
func codexFrame(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"response.create","model":"gpt-5.5","stream":true,"tool_choice":"auto","parallel_tool_calls":false,"store":false,` +
		`"include":["reasoning.encrypted_content"],"prompt_cache_key":"th-1","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}}],` +
		`"client_metadata":{"session_id":"th-1","x-codex-ws-stream-request-start-ms":"17","ws_request_header_x_openai_internal_codex_responses_lite":"true"},"input":[`)
	text := strings.Repeat(`fn main() { println!(\"hello\"); } // source\n`, 20)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function_call_output","call_id":"call_%d","output":"%s"}`, i, text)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkAppendBody expands a chained frame (one new item) after a
// transcript of the given size, beside a decode-and-marshal baseline that
// does the same with encoding/json.
func BenchmarkAppendBody(b *testing.B) {
	for _, size := range []int{40 << 10, 2 << 20} {
		prev := codexFrame(size)
		in := prev[strings.Index(string(prev), `"input":[`)+9 : len(prev)-2]
		frame := []byte(`{"type":"response.create","model":"gpt-5.5","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c","output":"ok"}]}`)
		b.Run(fmt.Sprintf("slipstream/%dKB", size>>10), func(b *testing.B) {
			var e FrameExpansion
			dst := make([]byte, 0, len(prev)+1024)
			b.ReportAllocs()
			b.SetBytes(int64(len(prev)))
			for i := 0; i < b.N; i++ {
				dst = e.AppendBody(dst[:0], frame, in, nil)
			}
		})
		b.Run(fmt.Sprintf("encoding_json/%dKB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(prev)))
			for i := 0; i < b.N; i++ {
				var last, f map[string]any
				if json.Unmarshal(prev, &last) != nil || json.Unmarshal(frame, &f) != nil {
					b.Fatal("bad fixture")
				}
				f["input"] = append(last["input"].([]any), f["input"].([]any)...)
				delete(f, "type")
				delete(f, "previous_response_id")
				if _, err := json.Marshal(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
