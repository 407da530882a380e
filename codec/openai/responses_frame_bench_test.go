package openai

import (
	"fmt"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"slipstream/internal/testkit"

	"slipstream/codec"
)

// A frame's expansion into its HTTP body beside the same member edits as
// a chain of sjson calls (type dropped, stream set, the WebSocket-only
// client_metadata keys dropped), on 1 KB, 10 KB and 1 MB frames. The
// expansion also finds the headers and the input items in the same pass;
// the sjson chain does not. The figures and the choice they led to are in
// docs/ARCHITECTURE.md.

// sjsonExpand is the edit part of the expansion of a frame that does not
// chain, as sjson calls.
func sjsonExpand(frame []byte) ([]byte, error) {
	out, err := sjson.DeleteBytes(frame, "type")
	if err == nil && gjson.GetBytes(out, "stream").Raw != "true" {
		out, err = sjson.SetRawBytes(out, "stream", []byte("true"))
	}
	md := gjson.GetBytes(out, "client_metadata")
	md.ForEach(func(k, _ gjson.Result) bool {
		if k.Str == "x-codex-ws-stream-request-start-ms" || len(k.Str) > len(headerKeyPrefix) && k.Str[:len(headerKeyPrefix)] == headerKeyPrefix {
			if err == nil {
				out, err = sjson.DeleteBytes(out, "client_metadata."+k.Str)
			}
		}
		return true
	})
	return out, err
}

func BenchmarkFrameEdits(b *testing.B) {
	for _, sz := range testkit.BodySizes {
		frame := codexFrame(sz.N)
		b.Run(sz.Name+"/expansion", func(b *testing.B) {
			var e FrameExpansion
			dst := make([]byte, 0, len(frame)+64)
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				dst = e.AppendBody(dst[:0], frame, nil, nil)
			}
		})
		b.Run(sz.Name+"/sjson_chained", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if _, err := sjsonExpand(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The sjson chain writes the same members as the expansion.
func TestFrameEditsAgree(t *testing.T) {
	for _, sz := range testkit.BodySizes {
		frame := codexFrame(sz.N)
		var e FrameExpansion
		got := e.AppendBody(nil, frame, nil, nil)
		want, err := sjsonExpand(frame)
		if err != nil || fmt.Sprint(topMembers(got)) != fmt.Sprint(topMembers(want)) {
			t.Fatalf("%s: %v\n%.400s\n%.400s", sz.Name, err, got, want)
		}
	}
}

func topMembers(obj []byte) map[string]string {
	out := map[string]string{}
	m := codec.ObjectMembers(obj)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		out[string(k)] = string(v)
	}
	return out
}
