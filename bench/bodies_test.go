package bench

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestBodiesAreValidExactAndDeterministic(t *testing.T) {
	f := func(name string, build func([]byte, BodyOpts) []byte, size int, stream bool) {
		t.Helper()
		o := BodyOpts{Model: "m-1", Size: size, Seed: 7, Stream: stream}
		a := build(nil, o)
		if !json.Valid(a) {
			t.Fatalf("%s %d: invalid JSON: ...%q", name, size, tail(a))
		}
		if len(a) != size {
			t.Fatalf("%s: got %d bytes, want %d", name, len(a), size)
		}
		if b := build(nil, o); !bytes.Equal(a, b) {
			t.Fatalf("%s %d: not deterministic", name, size)
		}
		if name != "gemini" && isStream(Anthropic, "/v1/messages", a) != stream {
			t.Fatalf("%s %d: stream flag not found as %v", name, size, stream)
		}
	}
	f("claude", AppendClaudeBody, 10800, false)
	f("claude", AppendClaudeBody, 10800, true)
	f("claude", AppendClaudeBody, 1<<20, false)
	f("chat", AppendChatBody, 10000, false)
	f("chat", AppendChatBody, 10000, true)
	f("responses", AppendResponsesBody, 1<<20, true)
	f("responses", AppendResponsesBody, 150<<10, false)
	f("gemini", AppendGeminiBody, 10800, false)
}

func TestCountTokensBodyHasNoStreamOrMaxTokens(t *testing.T) {
	b := AppendClaudeBody(nil, BodyOpts{Model: "m", Size: 20000, Seed: 1, CountTokens: true})
	if !json.Valid(b) || bytes.Contains(b, []byte(`"max_tokens"`)) || bytes.Contains(b, []byte(`"stream"`)) {
		t.Fatalf("bad count_tokens body: %q", clip(b))
	}
}

// A session grows: the body at a larger size starts with the body at a
// smaller size up to the smaller body's final (padding) message.
func TestSessionBodiesGrowByAppendingTurns(t *testing.T) {
	f := func(build func([]byte, BodyOpts) []byte, s *shape) {
		t.Helper()
		small := build(nil, BodyOpts{Model: "m", Size: 200 << 10, Seed: 3, Stream: true})
		big := build(nil, BodyOpts{Model: "m", Size: 2 << 20, Seed: 3, Stream: true})
		cut := bytes.LastIndex(small, []byte(s.finalPrefix))
		if cut < 100<<10 || !bytes.Equal(small[:cut], big[:cut]) {
			t.Fatalf("the 2 MB body does not extend the 200 KB one (cut at %d)", cut)
		}
	}
	f(AppendClaudeBody, &claudeShape)
	f(AppendResponsesBody, &responsesShape)
}
