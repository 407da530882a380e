package server

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"slipstream/codec"
)

// The server's own edits beside sjson doing the same, on 1 KB, 10 KB and
// 1 MB bodies: the model splice of an aliased same-dialect request, the
// codex-account request edits (accountBody) and the output member of an
// aggregated account stream (setMember). The figures and the choice they
// led to are in docs/ARCHITECTURE.md.

var editSizes = [...]struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"10KB", 10 << 10}, {"1MB", 1 << 20}}

// filled writes head, then items (each one item) joined by commas until
// about n bytes in all, then tail.
func filled(n int, head, item, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len()+len(item)/2+len(tail) < n || i == 0; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// aliasedBody is an Anthropic request of about n bytes, the model first.
func aliasedBody(n int) []byte {
	return filled(n, `{"model":"sonnet","max_tokens":32000,"stream":true,"messages":[`,
		`{"role":"user","content":[{"type":"text","text":"`+strings.Repeat(`Refactor the parser so that it reads one pass. `, 4)+`"}]}`, `]}`)
}

// translatedCodexBody is a Responses request of about n bytes as the
// translator writes it for a non-streamed client: no stream member, and
// sampling members the ChatGPT backend refuses after the input.
func translatedCodexBody(n int) []byte {
	return filled(n, `{"model":"gpt-5.1-codex","instructions":"You are a coding agent.","input":[`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"`+strings.Repeat(`Refactor the parser so that it reads one pass. `, 4)+`"}]}`,
		`],"max_output_tokens":32000,"temperature":1,"store":false}`)
}

// finalResponse is a response.completed response object with an empty
// output, and output items of about n bytes to put in it.
func finalResponse(n int) (final, items []byte) {
	final = []byte(`{"id":"resp_1","object":"response","created_at":1764547200,"status":"completed","model":"gpt-5.1-codex","output":[],"usage":{"input_tokens":1200,"output_tokens":300,"total_tokens":1500}}`)
	items = filled(n, `[`, `{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"`+strings.Repeat(`The parser now reads one pass. `, 4)+`"}]}`, `]`)
	return final, items
}

func BenchmarkModelSplice(b *testing.B) {
	model := []byte("claude-sonnet-4-5-20250929")
	quoted := []byte(`"claude-sonnet-4-5-20250929"`)
	for _, sz := range editSizes {
		body := aliasedBody(sz.n)
		val := codec.Member(body, "model")
		b.Run(sz.name+"/modelSplice", func(b *testing.B) {
			var m modelSplice
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				m.reset(body, codec.Member(body, "model"), model)
				if _, err := m.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sz.name+"/sjson_SetBytes", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				out, err := sjson.SetRawBytes(body, "model", quoted)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Discard.Write(out)
			}
		})
		b.Run(sz.name+"/sjson_ReplaceInPlace", func(b *testing.B) {
			// an alias is longer than the name the client sent, so the
			// in-place option falls back to a new slice; shown with a name of
			// the same length, its best case.
			work := append([]byte(nil), body...)
			same := [2][]byte{[]byte(`"sonnat"`), val}
			opts := &sjson.Options{Optimistic: true, ReplaceInPlace: true}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			i := 0
			for b.Loop() {
				out, err := sjson.SetRawBytesOptions(work, "model", same[i&1], opts)
				if err != nil || &out[0] != &work[0] {
					b.Fatal("not replaced in place", err)
				}
				_, _ = io.Discard.Write(out)
				work, i = out, i+1
			}
		})
	}
}

// handCodexEdit is accountBody's edit: the existence checks, then one
// pass that writes the added members, the kept ones and the closing brace.
func handCodexEdit(dst, body []byte) []byte {
	var add []byte
	if !gjson.GetBytes(body, "store").Exists() {
		add = append(add, `"store":false,`...)
	}
	if !gjson.GetBytes(body, "instructions").Exists() {
		add = append(add, `"instructions":"",`...)
	}
	if !gjson.GetBytes(body, "stream").Exists() {
		add = append(add, `"stream":true,`...)
	}
	drop := false
	for _, k := range codexDropped {
		drop = drop || gjson.GetBytes(body, k).Exists()
	}
	_ = drop
	return appendCodexBody(append(dst[:0], '{'), add, body)
}

// sjsonCodexEdit is the same edit as a chain of sjson calls.
func sjsonCodexEdit(body []byte) ([]byte, error) {
	out := body
	var err error
	if !gjson.GetBytes(out, "store").Exists() {
		out, err = sjson.SetRawBytes(out, "store", []byte("false"))
	}
	if err == nil && !gjson.GetBytes(out, "instructions").Exists() {
		out, err = sjson.SetBytes(out, "instructions", "")
	}
	if err == nil && gjson.GetBytes(out, "stream").Raw != "true" {
		out, err = sjson.SetRawBytes(out, "stream", []byte("true"))
	}
	for _, k := range codexDropped {
		if err == nil && gjson.GetBytes(out, k).Exists() {
			out, err = sjson.DeleteBytes(out, k)
		}
	}
	return out, err
}

func BenchmarkCodexAccountEdit(b *testing.B) {
	for _, sz := range editSizes {
		body := translatedCodexBody(sz.n)
		b.Run(sz.name+"/one_pass", func(b *testing.B) {
			dst := make([]byte, 0, len(body)+64)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				dst = handCodexEdit(dst, body)
			}
		})
		b.Run(sz.name+"/sjson_chained", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := sjsonCodexEdit(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAggregateOutput(b *testing.B) {
	for _, sz := range editSizes {
		final, items := finalResponse(sz.n)
		b.Run(sz.name+"/setMember", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(items)))
			for b.Loop() {
				_ = setMember(final, "output", items)
			}
		})
		b.Run(sz.name+"/sjson_SetRawBytes", func(b *testing.B) {
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

// The benchmarked sjson paths write the same members as the server's.
func TestSjsonEditsAgree(t *testing.T) {
	for _, sz := range editSizes {
		body := translatedCodexBody(sz.n)
		got, want := handCodexEdit(nil, body), must(sjsonCodexEdit(body))
		if fmt.Sprint(members(got)) != fmt.Sprint(members(want)) || !codec.Valid(got) {
			t.Fatalf("%s codex edit: %.300s\nsjson: %.300s", sz.name, got, want)
		}
		final, items := finalResponse(sz.n)
		got, want = setMember(final, "output", items), must(sjson.SetRawBytes(final, "output", items))
		if fmt.Sprint(members(got)) != fmt.Sprint(members(want)) || !codec.Valid(got) {
			t.Fatalf("%s output: %.300s\nsjson: %.300s", sz.name, got, want)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
