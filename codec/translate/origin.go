package translate

import (
	"bytes"
	"sync"

	"slipstream/codec"
)

// Replay tokens (Anthropic thinking signatures and redacted_thinking
// data, Gemini thoughtSignature, OpenAI Responses encrypted_content) are
// valid only for the vendor that produced them. When slipstream writes
// one into another dialect's response it prefixes it with an origin tag
// naming the producing dialect; when a client sends the token back, a
// writer for that same dialect gets it without the tag, and a writer for
// any other dialect gets no token at all (the thinking part is then
// dropped or sent without it, as each writer does for history from
// another provider). A token without a tag came from the provider of the
// client's own dialect (the same-dialect path relays it untouched), so it
// too is dropped on the way to any other dialect.
//
// A tag is eight letters, a multiple of four base64 characters, so a
// tagged token that was base64 stays base64 (Gemini SDKs decode
// thoughtSignature to bytes and encode it back unchanged).
const tagLen = 8

var originTags = [codec.NumDialects]string{
	codec.DialectAnthropic: "SsOrAnth",
	codec.DialectChat:      "SsOrChat",
	codec.DialectResponses: "SsOrResp",
	codec.DialectGemini:    "SsOrGemi",
}

// tagPrefix is what every tag starts with.
var tagPrefix = []byte(codec.OriginTagPrefix)

// originOf returns the dialect a token's tag names and the token without
// it, or client and the token itself when it has no tag.
func originOf(sig []byte, client codec.Dialect) (codec.Dialect, []byte) {
	if len(sig) < tagLen || !bytes.HasPrefix(sig, tagPrefix) {
		return client, sig
	}
	for d := range originTags {
		if t := originTags[d]; t != "" && string(sig[:tagLen]) == t {
			return codec.Dialect(d), sig[tagLen:]
		}
	}
	return client, sig
}

// AppendRequestFrom is AppendRequest for a request read from the client
// dialect: replay tokens whose origin is not up are left out, and up's
// own lose their tag. r is unchanged when it returns.
func AppendRequestFrom(client, up codec.Dialect, dst []byte, r *codec.Request, model []byte) ([]byte, error) {
	u := sortTokens(r, client, up)
	dst, err := AppendRequest(up, dst, r, model)
	u.restore(r)
	return dst, err
}

// tokenUndo remembers the replay tokens sortTokens changed.
type tokenUndo struct {
	idx  []int32
	sigs [][]byte
}

var undoPool = sync.Pool{New: func() any { return new(tokenUndo) }}

// sortTokens edits r's replay tokens for up, remembering the originals;
// nil when nothing changed.
func sortTokens(r *codec.Request, client, up codec.Dialect) *tokenUndo {
	var u *tokenUndo
	for i := range r.Parts {
		p := &r.Parts[i]
		if (p.Kind != codec.PartThinking && p.Kind != codec.PartRedactedThinking) || len(p.Signature) == 0 {
			continue
		}
		origin, raw := originOf(p.Signature, client)
		if origin == up && len(raw) == len(p.Signature) {
			continue
		}
		if u == nil {
			u = undoPool.Get().(*tokenUndo)
		}
		u.idx = append(u.idx, int32(i))
		u.sigs = append(u.sigs, p.Signature)
		if origin == up {
			p.Signature = raw
		} else {
			p.Signature = nil
		}
	}
	return u
}

func (u *tokenUndo) restore(r *codec.Request) {
	if u == nil {
		return
	}
	for j, i := range u.idx {
		r.Parts[i].Signature = u.sigs[j]
	}
	clear(u.sigs)
	u.idx, u.sigs = u.idx[:0], u.sigs[:0]
	undoPool.Put(u)
}

// tagToken prefixes an upstream replay token with its origin before the
// client's encoder writes it; only the first token event of a block is
// tagged (a token split over several deltas stays one token). The tagged
// bytes live in s.tagBuf until the next event.
func (s *Stream) tagToken(ev *codec.Event) {
	if s.client == s.upstream || len(ev.Text) == 0 {
		return
	}
	if s.tagged && s.tagBlock == ev.Block {
		return
	}
	s.tagged, s.tagBlock = true, ev.Block
	s.tagBuf = append(append(s.tagBuf[:0], originTags[s.upstream]...), ev.Text...)
	ev.Text = s.tagBuf
}
