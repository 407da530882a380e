package ws

import (
	"encoding/json"
	"testing"

	"slipstream/pool"
)

func TestParseFrame(t *testing.T) {
	f := func(in, typ, prev, input string, prewarm bool) {
		t.Helper()
		var vals frameVals
		got, ok := parseFrame([]byte(in), &vals)
		if !ok || string(got.typ) != typ || string(got.prevID) != prev || string(got.input) != input || got.prewarm != prewarm {
			t.Errorf("parseFrame(%s) = %v, type %q prev %q input %q prewarm %v", in, ok, got.typ, got.prevID, got.input, got.prewarm)
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
		var vals frameVals
		if _, ok := parseFrame([]byte(in), &vals); ok {
			t.Errorf("parseFrame(%s) accepted", in)
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
		var e expansion
		got := e.appendBody(nil, []byte(frame), []byte(prevIn), []byte(prevOut))
		if !json.Valid(got) {
			t.Fatalf("appendBody(%s) is not JSON: %s", frame, got)
		}
		if string(got) != want {
			t.Errorf("appendBody(%s)\n got %s\nwant %s", frame, got, want)
		}
		if in := string(got[e.inStart:e.inEnd]); in != wantInput {
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
	var e expansion
	frame := `{"model":"m","client_metadata":{"session_id":"s1","x-codex-ws-stream-request-start-ms":"17","ws_request_header_x_openai_internal_codex_responses_lite":"true",` +
		`"x-codex-turn-state":"ts-1","x-codex-turn-metadata":"{\"turn_id\":\"t\"}","ws_request_header_bad":"a\r\nb","ws_request_header_x y":"1"},"input":[]}`
	got := e.appendBody(nil, []byte(frame), nil, nil)
	want := `{"model":"m","client_metadata":{"session_id":"s1","x-codex-turn-state":"ts-1","x-codex-turn-metadata":"{\"turn_id\":\"t\"}"},"input":[],"stream":true}`
	if string(got) != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	wantHdr := map[string]string{
		"x-openai-internal-codex-responses-lite": "true",
		"x-codex-turn-state":                     "ts-1",
		"x-codex-turn-metadata":                  `{"turn_id":"t"}`,
	}
	if e.nhdr != len(wantHdr) {
		t.Fatalf("%d headers, want %d", e.nhdr, len(wantHdr))
	}
	for i := 0; i < e.nhdr; i++ {
		k, v := e.header(i)
		if wantHdr[string(k)] != string(v) {
			t.Errorf("header %s = %q, want %q", k, v, wantHdr[string(k)])
		}
	}
}

// TestStoreEviction: transcripts share one budget; the least recently
// stored go first, and one larger than the budget is not kept.
func TestStoreEviction(t *testing.T) {
	s := store{max: 3 * 8192}
	tr := func(n int, id string) transcript {
		x := transcript{body: pool.Get(n)}
		x.body.B = x.body.B[:n]
		x.inEnd = n
		x.idLen = copy(x.id[:], id)
		return x
	}
	a, b, c := &conn{}, &conn{}, &conn{}
	s.put(a, tr(8000, "ra"))
	s.put(b, tr(8000, "rb"))
	s.put(c, tr(8000, "rc"))
	if !a.state.matches([]byte("ra")) || s.Used() > s.max {
		t.Fatalf("three fitting transcripts: a kept %v, used %d", a.state.matches([]byte("ra")), s.Used())
	}
	s.put(a, tr(8000, "ra2")) // a is now the most recent
	s.put(b, tr(16000, "rb2"))
	if c.state.body != nil || !a.state.matches([]byte("ra2")) || !b.state.matches([]byte("rb2")) {
		t.Errorf("after growing b: a %v, b %v, c kept %v; want c evicted", a.state.matches([]byte("ra2")), b.state.matches([]byte("rb2")), c.state.body != nil)
	}
	if s.put(c, tr(40000, "big")) || c.state.body != nil {
		t.Errorf("a transcript over the whole budget was kept")
	}
	got := s.take(a)
	if !got.matches([]byte("ra2")) || a.state.body != nil {
		t.Errorf("take: %v", got.matches([]byte("ra2")))
	}
	got.release()
	s.drop(b)
	if s.Used() != 0 || s.head != nil || s.tail != nil {
		t.Errorf("after dropping all: used %d, list %p %p", s.Used(), s.head, s.tail)
	}
}

// FuzzAppendBody: any frame of valid JSON, with any transcript of valid
// items, expands into a valid JSON object whose input span holds valid
// items.
func FuzzAppendBody(f *testing.F) {
	f.Add([]byte(`{"type":"response.create","model":"m","input":[{"a":1}],"client_metadata":{"ws_request_header_x":"1"}}`), []byte(`{"p":1}`))
	f.Add([]byte(`{"input":"hi","stream":false}`), []byte(``))
	f.Add([]byte(`{"input":[ ],"previous_response_id":"r"}`), []byte(`{"p":1},{"q":[2]}`))
	f.Fuzz(func(t *testing.T, frame, prevIn []byte) {
		if !json.Valid(frame) || len(frame) == 0 || frame[0] != '{' {
			return
		}
		if len(prevIn) > 0 && !json.Valid(append(append([]byte{'['}, prevIn...), ']')) {
			return
		}
		var e expansion
		got := e.appendBody(nil, frame, prevIn, nil)
		if !json.Valid(got) {
			t.Fatalf("appendBody(%s, %s) = %s: not JSON", frame, prevIn, got)
		}
		items := append(append([]byte{'['}, got[e.inStart:e.inEnd]...), ']')
		if !json.Valid(items) {
			t.Fatalf("input span %s is not a list of items", items)
		}
	})
}
