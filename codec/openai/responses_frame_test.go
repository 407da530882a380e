package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"slipstream/codec"
)

// TestExpandInPlace: a frame that does not chain, expanded within its own
// bytes, gives the body the copying expansion gives, whether its members
// grow (moved right first) or not.
func TestExpandInPlace(t *testing.T) {
	f := func(frame string, grows bool) {
		t.Helper()
		var vals FrameVals
		fr, ok := ParseFrame([]byte(frame), &vals)
		if !ok {
			t.Fatalf("ParseFrame(%s) refused", frame)
		}
		if fr.Grows() != grows {
			t.Fatalf("grows(%s) = %v, want %v", frame, !grows, grows)
		}
		var e1, e2 FrameExpansion
		want := e1.AppendBody(nil, []byte(frame), nil, nil)
		buf := make([]byte, len(frame), len(frame)+FrameSlack)
		copy(buf, frame)
		got := e2.ExpandInPlace(buf[:cap(buf)], buf[:len(frame)], grows)
		if !bytes.Equal(got, want) || e1.InStart != e2.InStart || e1.InEnd != e2.InEnd || !json.Valid(got) {
			t.Errorf("in place %s\n got %s\nwant %s", frame, got, want)
		}
		if len(got) <= cap(buf) && &got[0] != &buf[0] {
			t.Errorf("in place %s: the body left its buffer", frame)
		}
		if e2.Headers() != e1.Headers() {
			t.Errorf("in place %s: %d headers, want %d", frame, e2.Headers(), e1.Headers())
		}
		for i := 0; i < e1.Headers(); i++ {
			n1, v1 := e1.Header(i)
			n2, v2 := e2.Header(i)
			if string(n1) != string(n2) || string(v1) != string(v2) {
				t.Errorf("in place %s: header %s: %s, want %s: %s", frame, n2, v2, n1, v1)
			}
		}
	}
	f(`{"type":"response.create","model":"m","stream":false,"input":[{"a":1}],"generate":true}`, false)
	f(`{"model":"m"}`, false)       // input and stream appended at the end
	f(`{"input":[ ],"x":1}`, false) // an empty array
	f(` { "type" : "response.create" , "model" : "m" , "input" : [ {"a" : 1} , {"b":2} ] , "stream" : true } `[1:], false)
	f(`{"input":[{"a":1}],"type":"response.create","client_metadata":{"x-codex-ws-stream-request-start-ms":"1","ws_request_header_x_a_b":"v","x-codex-turn-state":"s","k":"v"}}`, false)
	f(`{"model":"m","input":"hi"}`, true) // a string input grows
	f(`{"model":"m","input":5}`, true)    // so does a scalar
	f(`{"model":"m","stream":1}`, true)   // and a short stream value
	// The most a frame grows ahead of its reading: a short stream value,
	// then a string input, with nothing dropped before them.
	f(`{"stream":1,"input":"hi","model":"m","type":"response.create"}`, true)
	f(`{"stream":0,"input":"","client_metadata":{"ws_request_header_x":"v"}}`, true)
	if MaxFrameGrowth >= FrameSlack {
		t.Fatalf("MaxFrameGrowth %d must stay under FrameSlack %d", MaxFrameGrowth, FrameSlack)
	}
}

func TestParseFrame(t *testing.T) {
	f := func(in, typ, prev, input string, prewarm bool) {
		t.Helper()
		var vals FrameVals
		got, ok := ParseFrame([]byte(in), &vals)
		if !ok || string(got.Type) != typ || string(got.PrevID) != prev || string(got.Input) != input || got.Prewarm != prewarm {
			t.Errorf("ParseFrame(%s) = %v, type %q prev %q input %q prewarm %v", in, ok, got.Type, got.PrevID, got.Input, got.Prewarm)
		}
	}
	f(`{"type":"response.create","model":"m","input":[]}`, "response.create", "", "[]", false)
	f(`{"type":"response.create","previous_response_id":"resp_1","input":[{"a":1}],"generate":false}`, "response.create", "resp_1", `[{"a":1}]`, true)
	f(`{"generate":true,"type":"x"}`, "x", "", "", false)
	f(`{"type" : "x", "input" : [ 1 ] }`, "x", "", "[ 1 ]", false)
}

// TestParseFrameInvalid: what is not one complete JSON object, or names a
// member twice, is refused before any member is read.
func TestParseFrameInvalid(t *testing.T) {
	f := func(in string) {
		t.Helper()
		var vals FrameVals
		if _, ok := ParseFrame([]byte(in), &vals); ok {
			t.Errorf("ParseFrame(%s) accepted", in)
		}
	}
	f(`{"type":"response.create","input":[]`)
	f(`{"type":"response.create","input":[{"a":1}`)
	f(`{"type":"response.create","input":"abc`)
	f(`{"type":"response.create"} x`)
	f(`{"type":"response.create"}{}`)
	f(`{"type":"a","type":"b"}`)
	f(`{"input":[],"Input":[1]}`)
	f(`{"input":[],"stream":true,"stream":1}`)
	f(`{"model":"m","mod\u0065l":"n"}`)
	f(`[1,2]`)
	f(`not json`)
	f(``)
}

// TestAppendBody: the HTTP body a frame becomes.
func TestAppendBody(t *testing.T) {
	f := func(frame, prevIn, prevOut, want string, wantInput string) {
		t.Helper()
		var e FrameExpansion
		got := e.AppendBody(nil, []byte(frame), []byte(prevIn), []byte(prevOut))
		if !json.Valid(got) {
			t.Fatalf("AppendBody(%s) is not JSON: %s", frame, got)
		}
		if string(got) != want {
			t.Errorf("AppendBody(%s)\n got %s\nwant %s", frame, got, want)
		}
		if in := string(got[e.InStart:e.InEnd]); in != wantInput {
			t.Errorf("input span = %s, want %s", in, wantInput)
		}
	}
	// A full frame: type and generate go, stream is forced on.
	f(`{"type":"response.create","model":"m","stream":false,"input":[{"a":1}],"generate":true}`, "", "",
		`{"model":"m","stream":true,"input":[{"a":1}]}`, `{"a":1}`)
	// A chained frame: previous input, previous output, new items.
	f(`{"type":"response.create","model":"m","previous_response_id":"r1","input":[ {"c":3} ]}`, `{"a":1}`, `{"b":2}`,
		`{"model":"m","input":[{"a":1},{"b":2},{"c":3}],"stream":true}`, `{"a":1},{"b":2},{"c":3}`)
	// An empty increment, and no output.
	f(`{"model":"m","input":[ ]}`, `{"a":1}`, "", `{"model":"m","input":[{"a":1}],"stream":true}`, `{"a":1}`)
	// No input member at all.
	f(`{"model":"m"}`, `{"a":1}`, `{"b":2}`, `{"model":"m","input":[{"a":1},{"b":2}],"stream":true}`, `{"a":1},{"b":2}`)
	// A string input is one user message.
	f(`{"model":"m","input":"hi"}`, "", "", `{"model":"m","input":[{"type":"message","role":"user","content":"hi"}],"stream":true}`,
		`{"type":"message","role":"user","content":"hi"}`)
	// Other members pass byte for byte, unknown ones included.
	f(`{"type":"response.create","tools":[{"type":"custom","name":"apply_patch"}],"x_new":{"k":[1,2]},"input":[]}`, "", "",
		`{"tools":[{"type":"custom","name":"apply_patch"}],"x_new":{"k":[1,2]},"input":[],"stream":true}`, ``)
}

// TestAppendMetadata: WebSocket-only client_metadata keys go, tunnelled
// headers become headers, turn state and turn metadata stay and are sent
// as headers too; header values are unescaped and checked.
func TestAppendMetadata(t *testing.T) {
	var e FrameExpansion
	frame := `{"model":"m","client_metadata":{"session_id":"s1","x-codex-ws-stream-request-start-ms":"17","ws_request_header_x_openai_internal_codex_responses_lite":"true",` +
		`"x-codex-turn-state":"ts-1","x-codex-turn-metadata":"{\"turn_id\":\"t\"}","ws_request_header_bad":"a\r\nb","ws_request_header_x y":"1"},"input":[]}`
	got := e.AppendBody(nil, []byte(frame), nil, nil)
	want := `{"model":"m","client_metadata":{"session_id":"s1","x-codex-turn-state":"ts-1","x-codex-turn-metadata":"{\"turn_id\":\"t\"}"},"input":[],"stream":true}`
	if string(got) != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	wantHdr := map[string]string{
		"x-openai-internal-codex-responses-lite": "true",
		"x-codex-turn-state":                     "ts-1",
		"x-codex-turn-metadata":                  `{"turn_id":"t"}`,
	}
	if e.Headers() != len(wantHdr) {
		t.Fatalf("%d headers, want %d", e.Headers(), len(wantHdr))
	}
	for i := 0; i < e.Headers(); i++ {
		k, v := e.Header(i)
		if wantHdr[string(k)] != string(v) {
			t.Errorf("header %s = %q, want %q", k, v, wantHdr[string(k)])
		}
	}
}

// FuzzAppendBody: any frame of valid JSON, with any transcript of valid
// items, expands into a valid JSON object whose input span holds valid
// items.
func FuzzAppendBody(f *testing.F) {
	f.Add([]byte(`{"type":"response.create","model":"m","input":[{"a":1}],"client_metadata":{"ws_request_header_x":"1"}}`), []byte(`{"p":1}`))
	f.Add([]byte(`{"input":"hi","stream":false}`), []byte(``))
	f.Add([]byte(`{"input":[ ],"previous_response_id":"r"}`), []byte(`{"p":1},{"q":[2]}`))
	f.Add([]byte(`{"model":"gpt-5","metadata":{"a":"b"},"prompt_cache_key":"k","stream":false,"input":["SsOrx"]}`), []byte(`{"s":"SsOry"}`))
	f.Add([]byte(`{"Model":"a","model":"b"}`), []byte(``))
	f.Add([]byte(`{"mod\u0065l":"a"}`), []byte(``))
	f.Add([]byte(`{"Stream":false,"input":[]}`), []byte(``))
	f.Fuzz(func(t *testing.T, frame, prevIn []byte) {
		if !json.Valid(frame) || len(frame) == 0 || frame[0] != '{' {
			return
		}
		if len(prevIn) > 0 && !json.Valid(append(append([]byte{'['}, prevIn...), ']')) {
			return
		}
		var e FrameExpansion
		got := e.AppendBody(nil, frame, prevIn, nil)
		if !json.Valid(got) {
			t.Fatalf("AppendBody(%s, %s) = %s: not JSON", frame, prevIn, got)
		}
		items := append(append([]byte{'['}, got[e.InStart:e.InEnd]...), ']')
		if !json.Valid(items) {
			t.Fatalf("input span %s is not a list of items", items)
		}
		checkRouted(t, &e, frame, prevIn, got)
	})
}

// checkRouted: for a frame ParseFrame accepts, what the expansion reports
// of its body is what the server's own pass over the body would find:
// the routed members' values, no member named twice, and a tag only
// where the frame or the transcript may hold one.
func checkRouted(t *testing.T, e *FrameExpansion, frame, prevIn, body []byte) {
	t.Helper()
	var fv FrameVals
	f, ok := ParseFrame(frame, &fv)
	if !ok || !e.RoutedOK {
		return
	}
	var want [len(codec.RoutedMembers)][]byte
	dup, tagged, ok := codec.ValidShapeTopTagged(body, codec.RoutedMembers[:], want[:])
	if !ok || dup >= 0 {
		t.Fatalf("body %s of an accepted frame: valid %v, dup %d", body, ok, dup)
	}
	for i, r := range e.Routed {
		var got []byte
		if r != [2]int{} {
			got = body[r[0]:r[1]]
		}
		if string(got) != string(want[i]) || (got == nil) != (want[i] == nil) {
			t.Fatalf("%s in %s: expansion says %q, the body holds %q", codec.RoutedMembers[i], body, got, want[i])
		}
	}
	if tagged && !f.Tagged && !codec.MayHoldOriginTag(prevIn) {
		t.Fatalf("body %s holds a tag neither the frame nor the transcript reported", body)
	}
}
