package server

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/pool"
)

// generate serves a generation request. It reports whether it handed x
// to a body stream (see handOffStream).
func (s *Server) generate(x *exchange) bool {
	if !x.prepare() {
		return false
	}
	x.liveAdd()
	if x.target.Provider.IsMock() {
		return s.serveMock(x)
	}
	if !x.pickFirst() {
		return false
	}
	return s.forward(x)
}

// prepare validates the body, finds the model and its target, and checks
// the key's policy. On failure it has written the error and returns false.
func (x *exchange) prepare() bool {
	ctx, d := x.ctx, x.rt.dialect
	if !x.readTop() {
		return false
	}
	if d == codec.DialectGemini {
		if !x.checkPathModel() {
			return false
		}
		// The path's model is raw bytes; x.model holds escaped content,
		// as everywhere else, because responses echo it.
		x.modelBuf = codec.AppendEscaped(x.modelBuf[:0], x.geminiModel)
		x.model = x.modelBuf
	} else if len(x.model) == 0 {
		x.s.writeError(ctx, d, fasthttp.StatusBadRequest, "missing model: the request body needs a \"model\" string")
		return false
	}
	model := pool.B2S(x.model)
	if !x.key.Allows(model) {
		x.s.writeError(ctx, d, fasthttp.StatusForbidden, "this API key may not use model "+clipString(x.model))
		return false
	}
	if !x.admitKey() {
		return false
	}
	t, ok := x.s.reg.Resolve(model, d)
	if !ok {
		x.s.writeError(ctx, d, fasthttp.StatusNotFound, "no provider serves model "+clipString(x.model)+" ("+x.s.reg.Configured()+")")
		return false
	}
	x.target = t
	x.upModel = x.model
	if t.Aliased {
		x.upModel = pool.S2B(t.Model)
	}
	return x.checkUpModel() && x.guardFront()
}

// readTop checks the body's shape in one pass and reads its model and
// stream members (x.model, x.modelVal, x.stream; Gemini takes both from
// the path). A body with two model or two stream members, however their
// names are spelled, is refused: slipstream would route on one and the
// upstream run the other. On failure it has written the error.
func (x *exchange) readTop() bool {
	ctx, d := x.ctx, x.rt.dialect
	var top [len(topKeys)][]byte
	if !x.readChecked(&top) {
		dup, tagged, ok := codec.ValidShapeTopTagged(x.body, topKeys[:], top[:])
		if !ok {
			x.s.writeError(ctx, d, fasthttp.StatusBadRequest, "request body is not a valid JSON object")
			return false
		}
		if dup >= 0 {
			x.s.writeError(ctx, d, fasthttp.StatusBadRequest, "the request body has more than one \""+topKeys[dup]+"\" member")
			return false
		}
		x.tagged = tagged
	}
	x.try.meta, x.try.cacheKey = top[2], top[3]
	if d == codec.DialectGemini {
		return true
	}
	x.stream = codec.IsTrue(top[1])
	x.model, x.modelVal = codec.StrContent(top[0]), top[0]
	if len(x.model) == 0 {
		return true
	}
	// Responses echo the model: it must be valid down to its escapes
	// (the rest of the body was checked for shape only).
	if !codec.Valid(top[0]) {
		x.s.writeError(ctx, d, fasthttp.StatusBadRequest, "the model must be a string of valid JSON")
		return false
	}
	if bytes.IndexByte(x.model, '\\') >= 0 && !x.unescapeModel() {
		x.s.writeError(ctx, d, fasthttp.StatusBadRequest, "the model name may not hold quotes, backslashes or control characters")
		return false
	}
	return true
}

// unescapeModel replaces an escaped model name ("gpt\u002d5") by the name
// it stands for, which the upstream reads: key policy and routing must see
// that name. A name that would need escaping again is refused, so x.model
// stays valid string content.
func (x *exchange) unescapeModel() bool {
	var err error
	x.modelBuf, err = codec.AppendUnescaped(x.modelBuf[:0], x.model)
	if err != nil {
		return false
	}
	for _, c := range x.modelBuf {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	x.model = x.modelBuf
	return true
}

// readChecked takes what a WebSocket turn's transport knows of the body
// it built (ws.Checked: valid by construction, where the routed members
// lie, whether it may hold a tag) instead of a pass over the body, and
// reports whether it did. Any other body is read by readTop itself.
func (x *exchange) readChecked(top *[len(topKeys)][]byte) bool {
	if x.fsink.out == nil || x.guard.orig != nil {
		return false // not a turn's body, or a redaction of it
	}
	c := x.fsink.out.Checked()
	if c == nil || c.Size != len(x.body) {
		return false
	}
	for i, r := range c.Routed {
		if r != [2]int{} {
			top[i] = x.body[r[0]:r[1]]
		}
	}
	x.tagged = c.Tagged
	return true
}

// topKeys are the members prepare reads while it validates the body;
// metadata and prompt_cache_key name a conversation for affinity.
var topKeys = codec.RoutedMembers
