package gemini

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"slipstream/codec"
	"slipstream/codec/sse"
)

var kindNames = [...]string{"start", "text", "thinking", "signature", "redacted", "call", "args", "stop", "usage", "finish", "end", "error"}

func dumpUsage(u codec.Usage) string {
	if !u.Known {
		return "-"
	}
	return fmt.Sprintf("in=%d,cr=%d,out=%d,rs=%d", u.Input, u.CacheRead, u.Output, u.Reasoning)
}

// dumpEvents renders events one a line.
func dumpEvents(evs []codec.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(kindNames[ev.Kind])
		switch ev.Kind {
		case codec.EventStart:
			fmt.Fprintf(&b, " %s %s %s", ev.ID, ev.Name, dumpUsage(ev.Usage))
		case codec.EventText, codec.EventThinking, codec.EventSignature, codec.EventToolArgs:
			fmt.Fprintf(&b, " %d %s", ev.Block, ev.Text)
		case codec.EventToolCall:
			fmt.Fprintf(&b, " %d %s %s", ev.Block, ev.ID, ev.Name)
		case codec.EventBlockStop:
			fmt.Fprintf(&b, " %d", ev.Block)
		case codec.EventUsage:
			fmt.Fprintf(&b, " %s", dumpUsage(ev.Usage))
		case codec.EventFinish:
			fmt.Fprintf(&b, " %d %s", ev.Stop, dumpUsage(ev.Usage))
		case codec.EventError:
			fmt.Fprintf(&b, " %d %d %s", ev.Err.Status, ev.Err.Kind, ev.Err.Message)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// decodeStream runs a whole SSE stream through d, copying each call's
// events to text before the next call invalidates their views.
func decodeStream(t testing.TB, d *Decoder, stream []byte) string {
	t.Helper()
	var rd sse.Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	var out strings.Builder
	var evs []codec.Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs, err = d.DecodeEvent(evs[:0], ev.Name, ev.Data)
		if err != nil {
			out.WriteString("ERR " + err.Error() + "\n")
			continue
		}
		out.WriteString(dumpEvents(evs))
	}
	out.WriteString(dumpEvents(d.End(evs[:0])))
	return out.String()
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecoderStream(t *testing.T) {
	var d Decoder
	f := func(file, want string) {
		t.Helper()
		d.Reset()
		if got := decodeStream(t, &d, readTestdata(t, file)); got != want {
			t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", file, got, want)
		}
	}
	f("stream_text.sse", `start aBcD123 gemini-2.5-flash in=120,cr=0,out=0,rs=0
text 0 It is 18C
text 0  and \"sunny\".\n
stop 0
finish 1 in=120,cr=0,out=9,rs=0
end
`)
	f("stream_tool.sse", `start eFg+H456 gemini-2.5-flash in=85,cr=0,out=0,rs=0
signature 0 CiQB
stop 0
call 1 call_eFg_H456_0 get_weather
args 1 {\"city\":\"Paris\"}
stop 1
call 2 call_eFg_H456_1 get_weather
args 2 {\"city\":\"Rome, \\\"IT\\\"\"}
stop 2
finish 4 in=85,cr=0,out=12,rs=0
end
`)
	f("stream_thinking.sse", `start r3 gemini-3-pro-preview in=300,cr=256,out=0,rs=0
thinking 0 **Planning** the answer
thinking 0  carefully.
stop 0
text 1 Here is the answer.
stop 1
finish 2 in=300,cr=256,out=45,rs=40
usage in=300,cr=256,out=46,rs=40
end
`)
	f("stream_error.sse", `start e1 gemini-2.5-pro -
text 0 Partial
error 503 7 The model is overloaded. Please try again later.
`)
	f("stream_truncated.sse", `start t1 gemini-2.5-pro -
text 0 Cut
error 502 6 upstream stream ended before a finish reason
`)
	f("stream_safety.sse", `start s1 gemini-2.5-flash in=10,cr=0,out=0,rs=0
finish 5 in=10,cr=0,out=0,rs=0
end
`)
}

func TestDecoderStreamMalformed(t *testing.T) {
	var d Decoder
	got := decodeStream(t, &d, []byte("data: {\"candidates\":[\n\ndata: [1]\n\n"))
	want := "ERR gemini: malformed response event\nERR gemini: malformed response event\n" +
		"error 502 6 upstream stream ended before a finish reason\n"
	if got != want {
		t.Fatalf("got:\n%s", got)
	}
}

func TestDecoderBody(t *testing.T) {
	var d Decoder
	f := func(body, want string) {
		t.Helper()
		d.Reset()
		evs, err := d.DecodeBody(nil, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := dumpEvents(evs); got != want {
			t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", body, got, want)
		}
	}
	f(string(readTestdata(t, "body_parallel.json")), `start P4r gemini-2.5-flash in=50,cr=0,out=0,rs=0
thinking 0 Checking both.
stop 0
text 1 I'll check both cities.
stop 1
signature 2 CiQBsig
stop 2
call 3 call_P4r_0 get_weather
args 3 {\"city\":\"Paris\"}
stop 3
call 4 fc-2 get_time
args 4 {}
stop 4
finish 4 in=50,cr=0,out=27,rs=7
end
`)
	f(string(readTestdata(t, "body_blocked.json")), `start b1 gemini-2.5-flash in=7,cr=0,out=0,rs=0
finish 5 in=7,cr=0,out=0,rs=0
end
`)
	// A streamed JSON array (streamGenerateContent without alt=sse).
	f(`[{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"responseId":"x"},{"candidates":[{"content":{"parts":[{"text":"b"}]},"finishReason":"STOP"}]}]`,
		"start x  -\ntext 0 a\ntext 0 b\nstop 0\nfinish 1 -\nend\n")
	// A body without finishReason is complete all the same.
	f(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`, "start   -\ntext 0 a\nstop 0\nfinish 1 -\nend\n")
	f(`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`, "error 429 5 Quota exceeded\n")
	f(`{"error":{"status":"NOT_FOUND"}}`, "error 404 3 upstream returned an error without a message\n")
}
