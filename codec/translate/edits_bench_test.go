package translate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"slipstream/codec"
	"slipstream/internal/testkit"
)

// The output member of an aggregated account stream (setMember) beside
// sjson doing the same, on 1 KB, 10 KB and 1 MB bodies. The figures and
// the choice they led to are in docs/ARCHITECTURE.md.

// finalResponse is a response.completed response object with an empty
// output, and output items of about n bytes to put in it.
func finalResponse(n int) (final, items []byte) {
	final = []byte(`{"id":"resp_1","object":"response","created_at":1764547200,"status":"completed","model":"gpt-5.1-codex","output":[],"usage":{"input_tokens":1200,"output_tokens":300,"total_tokens":1500}}`)
	items = testkit.Filled(n, `[`, `{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"`+strings.Repeat(`The parser now reads one pass. `, 4)+`"}]}`, `]`)
	return final, items
}

func BenchmarkAggregateOutput(b *testing.B) {
	for _, sz := range testkit.BodySizes {
		final, items := finalResponse(sz.N)
		b.Run(sz.Name+"/setMember", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(items)))
			for b.Loop() {
				_ = setMember(final, "output", items)
			}
		})
		b.Run(sz.Name+"/sjson_SetRawBytes", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(items)))
			for b.Loop() {
				if _, err := sjson.SetRawBytes(final, "output", items); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// members is obj's top-level members, for comparing documents whose
// members come in another order.
func members(obj []byte) map[string]string {
	out := map[string]string{}
	m := codec.ObjectMembers(obj)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		out[string(k)] = string(v)
	}
	return out
}

// sjson writes the same members as setMember.
func TestSjsonSetMemberAgrees(t *testing.T) {
	for _, sz := range testkit.BodySizes {
		final, items := finalResponse(sz.N)
		got := setMember(final, "output", items)
		want, err := sjson.SetRawBytes(final, "output", items)
		if err != nil || fmt.Sprint(members(got)) != fmt.Sprint(members(want)) || !codec.Valid(got) {
			t.Fatalf("%s output: %v %.300s\nsjson: %.300s", sz.Name, err, got, want)
		}
	}
}
