//go:build !race

package openai

import (
	"bytes"
	"io"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// chatSplit returns the data of each event of an SSE stream (copies).
func chatSplit(t *testing.T, stream []byte) [][]byte {
	t.Helper()
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var out [][]byte
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]byte(nil), ev.Data...))
	}
}

func TestChatDecoderAllocs(t *testing.T) {
	for _, name := range []string{"stream_text", "stream_tools", "stream_reasoning", "stream_compat", "stream_error"} {
		datas := chatSplit(t, chatReadTestdata(t, name+".sse"))
		var d ChatDecoder
		evs := make([]codec.Event, 0, 16)
		run := func() {
			d.Reset()
			for _, data := range datas {
				var err error
				if evs, err = d.DecodeEvent(evs[:0], nil, data); err != nil {
					t.Fatal(err)
				}
			}
		}
		run()
		// Budget: 0 allocations for a whole stream in steady state.
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Fatalf("%s: %.1f allocs per stream, want 0", name, n)
		}
	}
}

func TestChatDecoderBodyAllocs(t *testing.T) {
	body := chatReadTestdata(t, "body_tools.json")
	var d ChatDecoder
	evs := make([]codec.Event, 0, 16)
	run := func() {
		d.Reset()
		evs, _ = d.DecodeBody(evs[:0], body)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%.1f allocs per body, want 0", n)
	}
}

func TestChatEncoderAllocs(t *testing.T) {
	evs := chatEvents()
	for _, stream := range []bool{true, false} {
		req := &codec.Request{Model: []byte("gpt-client"), Created: 1, IncludeUsage: true}
		var e ChatEncoder
		dst := make([]byte, 0, 16<<10)
		run := func() {
			e.Reset(req, stream)
			dst = dst[:0]
			for i := range evs {
				dst = e.Append(dst, &evs[i])
			}
		}
		run()
		// Budget: 0 allocations for a whole response in steady state.
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Fatalf("stream=%v: %.1f allocs per response, want 0", stream, n)
		}
	}
}

func TestChatTranscodeAllocs(t *testing.T) {
	datas := chatSplit(t, chatReadTestdata(t, "stream_compat.sse"))
	req := &codec.Request{Model: []byte("gpt-client"), Created: 1, IncludeUsage: true}
	var d ChatDecoder
	var e ChatEncoder
	evs := make([]codec.Event, 0, 16)
	dst := make([]byte, 0, 16<<10)
	run := func() {
		d.Reset()
		e.Reset(req, true)
		dst = dst[:0]
		for _, data := range datas {
			evs, _ = d.DecodeEvent(evs[:0], nil, data)
			for i := range evs {
				dst = e.Append(dst, &evs[i])
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%.1f allocs per stream, want 0", n)
	}
}

// chatBigRequest builds a Chat agent session of n turns whose texts are
// full of escapes (newlines, quotes), the case where gjson would allocate.
func chatBigRequest(n int) []byte {
	b := []byte(`{"model":"gpt-4.1","stream":true,"messages":[{"role":"system","content":"You are a \"coding\" agent.\nBe terse."}`)
	for i := 0; i < n; i++ {
		b = append(b, `,{"role":"user","content":"run ls\nplease \"now\""},`...)
		b = append(b, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_`...)
		b = codec.AppendInt(b, int64(i))
		b = append(b, `","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"ls\",\"-la\"]}"}}]},`...)
		b = append(b, `{"role":"tool","tool_call_id":"call_`...)
		b = codec.AppendInt(b, int64(i))
		b = append(b, `","content":"total 8\ndrwxr-xr-x  2 u u 4096 .\n-rw-r--r--  1 u u  120 \"a.txt\"\n"}`...)
	}
	return append(b, `],"tools":[{"type":"function","function":{"name":"shell","description":"Run a \"command\"\n","parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}}}}}]}`...)
}

func TestChatRequestAllocs(t *testing.T) {
	body := chatBigRequest(200)
	var r codec.Request
	dst := make([]byte, 0, 2*len(body))
	run := func() {
		r.Reset()
		if err := DecodeChatRequest(&r, body); err != nil {
			t.Fatal(err)
		}
		var err error
		if dst, err = AppendChatRequest(dst[:0], &r, []byte("up")); err != nil {
			t.Fatal(err)
		}
	}
	run()
	// Budget: 0 allocations per request once r and dst have their
	// capacity (no string is unescaped, see ChatField).
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%.0f allocs per %d-byte request, want 0", n, len(body))
	}
}
