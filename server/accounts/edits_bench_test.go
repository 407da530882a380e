package accounts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"slipstream/codec"
	"slipstream/internal/testkit"
)

// The codex-account request edits (codexBody) beside sjson doing the same,
// on 1 KB, 10 KB and 1 MB bodies. The figures and the choice they led to
// are in docs/ARCHITECTURE.md.

// translatedCodexBody is a Responses request of about n bytes as the
// translator writes it for a non-streamed client: no stream member, and
// sampling members the ChatGPT backend refuses after the input.
func translatedCodexBody(n int) []byte {
	return testkit.Filled(n, `{"model":"gpt-5.1-codex","instructions":"You are a coding agent.","input":[`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"`+strings.Repeat(`Refactor the parser so that it reads one pass. `, 4)+`"}]}`,
		`],"max_output_tokens":32000,"temperature":1,"store":false}`)
}

// handCodexEdit is codexBody's edit: the existence checks, then one
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
	for _, sz := range testkit.BodySizes {
		body := translatedCodexBody(sz.N)
		b.Run(sz.Name+"/one_pass", func(b *testing.B) {
			dst := make([]byte, 0, len(body)+64)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				dst = handCodexEdit(dst, body)
			}
		})
		b.Run(sz.Name+"/sjson_chained", func(b *testing.B) {
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

// The sjson chain writes the same members as the one-pass edit.
func TestSjsonCodexEditAgrees(t *testing.T) {
	for _, sz := range testkit.BodySizes {
		body := translatedCodexBody(sz.N)
		got, err := sjsonCodexEdit(body)
		want := handCodexEdit(nil, body)
		if err != nil || fmt.Sprint(members(got)) != fmt.Sprint(members(want)) || !codec.Valid(want) {
			t.Fatalf("%s codex edit: %v %.300s\nsjson: %.300s", sz.Name, err, want, got)
		}
	}
}
