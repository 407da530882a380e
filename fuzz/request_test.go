package fuzz

import (
	"testing"

	"slipstream/chaos"
	"slipstream/codec"
)

// requestModels are the models a FuzzRequest input may name in the path
// of a Gemini request (other dialects name theirs in the body).
var requestModels = []string{"fz-gem-ok", "fz-chat-ok", "fz-gem-evil", "fz-alias-ok", "fz-anth-ok", "fz-resp-nope", "fz-alias2-ok", "gemini-2.5-pro"}

// FuzzRequest sends hostile request bytes (duplicate members, escaped
// member names, huge numbers, invalid UTF-8, anything) from a client of
// each dialect to upstreams that answer well. Properties: slipstream
// survives; no upstream receives a model the key may not use; every reply
// is a well-formed success or error of the client's dialect (streams pass
// the dialect's grammar checker).
//
// sel picks the client dialect (bits 0-1), for Gemini the path's model
// (bits 2-4) and whether it streams (bit 5).
func FuzzRequest(f *testing.F) {
	for i, d := range chaos.Dialects {
		for _, stream := range []bool{false, true} {
			_, _, body := chaos.ClientRequest(d, "fz-"+dialectTag[chaos.Dialects[(i+1)%4]]+"-ok", fuzzKey, stream)
			sel := uint8(i)
			if stream {
				sel |= 1 << 5
			}
			f.Add(sel, body)
		}
	}
	for _, s := range requestSeeds {
		for i := range chaos.Dialects {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		if len(body) > 512<<10 {
			t.Skip("over the harness's body limit")
		}
		hs := getHarness(t)
		hs.setScript(script{})
		d := chaos.Dialects[sel&3]
		stream := sel&(1<<5) != 0
		path, hdr, _ := chaos.ClientRequest(d, requestModels[(sel>>2)&7], fuzzKey, stream)
		r, ups := hs.exchange(t, path, hdr, body)
		hs.checkAlive(t)
		hs.checkSecrets(t, r)
		checkAllowList(t, ups, body)
		checkShape(t, d, r, body)
	})
}

// requestSeeds are bodies every dialect gets: the allow-list and
// duplicate-member tricks, escapes, numbers, broken UTF-8.
var requestSeeds = []string{
	`{"model":"fz-chat-ok","messages":[{"role":"user","content":"hi"}],"model":"fz-chat-evil"}`,
	`{"model":"fz-anth-ok","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"mod\u0065l":"fz-anth-evil"}`,
	`{"mod\u0065l":"fz-resp-evil","model":"fz-resp-ok","input":"hi"}`,
	`{"model":"fz-alias-ok","input":"hi","model":"fz-gem-evil"}`,
	`{"model":"fz-alias2-ok","max_tokens":5,"messages":[],"stream":true,"stream":false}`,
	`{"model":"fz-chat-ok","messages":[{"role":"user","content":"hi"}],"stream":true,"str\u0065am":false}`,
	`{"model":"fz-chat-\u006fk","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"fz-chat-evil\u0000-ok","messages":[]}`,
	`{"model":"fz-anth-ok","max_tokens":1e400,"temperature":-0.0e-999999,"messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"fz-resp-ok","input":"hi","max_output_tokens":123456789012345678901234567890}`,
	"{\"model\":\"fz-chat-ok\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\xc3\x28 bad utf-8\"}]}",
	"{\"model\":\"fz-chat-ok\xff\",\"messages\":[]}",
	"{\"mo\xffdel\":\"fz-chat-evil\",\"model\":\"fz-chat-ok\",\"messages\":[]}",
	`{"model":"fz-anth-ok","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}],"stream":true}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"model":"fz-gem-evil"}`,
	`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":1e308}}`,
	`{"model":["fz-chat-ok"],"messages":[]}`,
	`{"model":"fz-chat-ok","messages":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`[{"model":"fz-chat-evil"}]`,
	`{"model":"fz-chat-ok","messages":[{"role":"user","content":"hi"}]} {"model":"fz-chat-evil"}`,
	``,
	`{`,
}

// checkShape fails unless r is a well-formed success or error of
// dialect d. body is the client's, for the message.
func checkShape(t *testing.T, d codec.Dialect, r *chaos.Reply, body []byte) {
	t.Helper()
	stream := r.Header != nil && isSSE(r.Header.Get("Content-Type"))
	if _, err := chaos.CheckReply(d, stream, r, nil); err != nil {
		t.Fatalf("%v reply to %q: %v", d, clip(body), err)
	}
}
