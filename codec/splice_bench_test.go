package codec

import (
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"slipstream/internal/testkit"
)

// The request rewrite of a same-dialect relay beside sjson doing the same
// edits, on 1 KB, 10 KB and 1 MB bodies. The one-pass splice finds the
// members with ObjectMembers and copies the body once into a reused
// buffer; sjson.SetBytes and DeleteBytes each scan the document and copy
// it into a new slice; SetRawBytesOptions with Optimistic and
// ReplaceInPlace edits the body's own bytes (it still moves everything
// after the value, and works only when the result is not longer). The
// figures and the choice they led to are in docs/ARCHITECTURE.md.

// spliceBody is an Anthropic Messages request of about n bytes, the model
// first as the clients send it, then the sampling members, then the turns.
func spliceBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":32000,"temperature":1,"stream":true,"system":[{"type":"text","text":"You are a coding agent."}],"messages":[`)
	turn := `{"role":"user","content":[{"type":"text","text":"` + strings.Repeat(`Refactor the parser so that it reads one pass. `, 4) + `"}]}`
	for i := 0; b.Len()+len(turn)/2 < n || i == 0; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(turn)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// offsetIn is where view v starts in body (v is a view into body).
func offsetIn(body, v []byte) int { return cap(body) - cap(v) }

// renameEdits finds the model value in one pass and fills edits with its
// replacement.
func renameEdits(edits []Edit, body, model []byte) []Edit {
	v := Member(body, "model")
	start := offsetIn(body, v)
	return append(edits[:0], Edit{Start: start, End: start + len(v), Value: model})
}

// memberEdits finds, in one pass, the model and max_tokens values and the
// temperature member, and fills edits with: the model renamed, max_tokens
// set, temperature dropped (from the end of the value before it). It stops
// once it has all three: the server has refused duplicate members before.
func memberEdits(edits []Edit, body, model, maxTokens []byte) []Edit {
	edits = edits[:0]
	prevEnd := 1
	m := ObjectMembers(body)
	for k, v, ok := m.Next(); ok && len(edits) < 3; k, v, ok = m.Next() {
		start := offsetIn(body, v)
		switch string(k) {
		case "model":
			edits = append(edits, Edit{Start: start, End: start + len(v), Value: model})
		case "max_tokens":
			edits = append(edits, Edit{Start: start, End: start + len(v), Value: maxTokens})
		case "temperature":
			edits = append(edits, Edit{Start: prevEnd, End: start + len(v)})
		}
		prevEnd = start + len(v)
	}
	return edits
}

func BenchmarkModelRename(b *testing.B) {
	// names as long as the body's own: the only rename ReplaceInPlace can
	// do without a new slice is one that does not grow.
	models := [2][]byte{[]byte(`"claude-sonnet-4-6"`), []byte(`"claude-sonnet-4-5"`)}
	for _, sz := range testkit.BodySizes {
		body := spliceBody(sz.N)
		b.Run(sz.Name+"/splice", func(b *testing.B) {
			dst := make([]byte, 0, len(body)+64)
			edits := make([]Edit, 0, 1)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				edits = renameEdits(edits, body, models[0])
				dst = AppendSplice(dst[:0], body, edits)
			}
		})
		b.Run(sz.Name+"/sjson_SetBytes", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := sjson.SetRawBytes(body, "model", models[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sz.Name+"/sjson_ReplaceInPlace", func(b *testing.B) {
			// the body is the proxy's own buffer; renaming to a model name of
			// the same length each time keeps it the same size.
			work := append([]byte(nil), body...)
			opts := &sjson.Options{Optimistic: true, ReplaceInPlace: true}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			i := 0
			for b.Loop() {
				out, err := sjson.SetRawBytesOptions(work, "model", models[i&1], opts)
				if err != nil || &out[0] != &work[0] {
					b.Fatal("not replaced in place", err)
				}
				work, i = out, i+1
			}
		})
	}
}

func BenchmarkMemberEdits(b *testing.B) {
	model, maxTokens := []byte(`"claude-opus-4-1-0805"`), []byte(`8192`)
	for _, sz := range testkit.BodySizes {
		body := spliceBody(sz.N)
		b.Run(sz.Name+"/splice", func(b *testing.B) {
			dst := make([]byte, 0, len(body)+64)
			edits := make([]Edit, 0, 4)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				edits = memberEdits(edits, body, model, maxTokens)
				dst = AppendSplice(dst[:0], body, edits)
			}
		})
		b.Run(sz.Name+"/sjson_chained", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := sjsonMemberEdits(body, model, maxTokens); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sjsonMemberEdits(body, model, maxTokens []byte) ([]byte, error) {
	out, err := sjson.SetRawBytes(body, "model", model)
	if err == nil {
		out, err = sjson.SetRawBytes(out, "max_tokens", maxTokens)
	}
	if err == nil {
		out, err = sjson.DeleteBytes(out, "temperature")
	}
	return out, err
}

// The splice and the sjson chain write the same document.
func TestMemberEditsAgree(t *testing.T) {
	model, maxTokens := []byte(`"claude-opus-4-1-0805"`), []byte(`8192`)
	for _, sz := range testkit.BodySizes {
		body := spliceBody(sz.N)
		got := AppendSplice(nil, body, memberEdits(nil, body, model, maxTokens))
		want, err := sjsonMemberEdits(body, model, maxTokens)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: splice and sjson differ (%v):\n%.200s\n%.200s", sz.Name, err, got, want)
		}
		if n := len(body); n < sz.N*9/10 || n > sz.N*11/10 {
			t.Fatalf("%s body is %d bytes", sz.Name, n)
		}
	}
}
