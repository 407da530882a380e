package server

import (
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
)

// geminiArray frames the stream of a Gemini :streamGenerateContent
// request that did not ask for alt=sse as the JSON array Google serves
// then. Every path writes SSE events through writeOut as usual (the
// upstream is always asked for SSE); writeOut hands them here, and each
// whole event leaves as one array element, flushed as the event would
// have been. endStream
// closes the array, so a stream that ends in an error is still one
// well-formed JSON value.
type geminiArray struct {
	on  bool
	arr translate.ArrayStream
}

// startGeminiArray turns the framing on for a Gemini stream without
// alt=sse, and answers with Google's content type for it. It runs in
// handOffStream, while ctx is still the exchange's.
func (x *exchange) startGeminiArray(ctx *fasthttp.RequestCtx) {
	if x.rt.dialect != codec.DialectGemini || !x.stream || string(ctx.QueryArgs().Peek("alt")) == "sse" {
		return
	}
	x.geminiArray.on = true
	ctx.Response.Header.SetContentType("application/json; charset=UTF-8")
}

// frame returns the array bytes for the SSE bytes b (possibly none yet),
// valid until the next call.
func (g *geminiArray) frame(b []byte) []byte { return g.arr.Frame(b) }

// close writes the array's end. The client may be gone: errors are
// ignored, as the stream ends here anyway.
func (g *geminiArray) close(w streamWriter) {
	if !g.on {
		return
	}
	if _, err := w.Write(g.arr.Close()); err == nil {
		_ = w.Flush()
	}
}

// reset readies g for the next exchange, dropping an oversized buffer.
func (g *geminiArray) reset() {
	g.on = false
	g.arr.Reset()
}
