package openai

import (
	"os"
	"testing"

	"slipstream/codec"
)

// BenchmarkResponsesRequest reads Codex's request and writes it as a
// Responses upstream request, reusing the Request and the output buffer.
func BenchmarkResponsesRequest(b *testing.B) {
	body, err := os.ReadFile("testdata/responses/codex_request.json")
	if err != nil {
		b.Fatal(err)
	}
	var r codec.Request
	out := make([]byte, 0, 2*len(body))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.Reset()
		if err := DecodeResponsesRequest(&r, body); err != nil {
			b.Fatal(err)
		}
		if out, err = AppendResponsesRequest(out[:0], &r, []byte("m")); err != nil {
			b.Fatal(err)
		}
	}
}

// respLargeRequest builds a Codex-shaped session of n turns whose tool
// outputs and texts are full of escapes, as real transcripts are.
func respLargeRequest(n int) []byte {
	out := make([]byte, 0, n*12<<10)
	out = append(out, `{"model":"gpt-5-codex","instructions":"base\nprompt","input":[`...)
	line := `line of output with \"quotes\" and a tab\t\n`
	for i := 0; i < n; i++ {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"type":"message","role":"user","content":[{"type":"input_text","text":"do it\nnow"}]},`...)
		out = append(out, `{"type":"reasoning","summary":[{"type":"summary_text","text":"a\n"},{"type":"summary_text","text":"b\n"}],"encrypted_content":"gAAAA"},`...)
		out = append(out, `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\",\"-la\"]}","call_id":"call_`...)
		out = codec.AppendInt(out, int64(i))
		out = append(out, `"},{"type":"function_call_output","call_id":"call_`...)
		out = codec.AppendInt(out, int64(i))
		out = append(out, `","output":"`...)
		for j := 0; j < 200; j++ {
			out = append(out, line...)
		}
		out = append(out, `"}`...)
	}
	return append(out, `],"stream":true}`...)
}

func BenchmarkResponsesRequestLarge(b *testing.B) {
	body := respLargeRequest(200)
	var r codec.Request
	out := make([]byte, 0, 2*len(body))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r.Reset()
		if err := DecodeResponsesRequest(&r, body); err != nil {
			b.Fatal(err)
		}
		var err error
		if out, err = AppendResponsesRequest(out[:0], &r, []byte("m")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(body)), "body_bytes")
}
