package server

import (
	"sync"

	"slipstream/codec"
	"slipstream/codec/translate"
)

// Usage on every path. Translated and mock responses report it through
// their translate.Stream; same-dialect streams through the dialect's tail,
// which reads the usage events as they pass; a same-dialect body that is
// not a stream (passBody) through bodyTail, which keeps only the body's
// last bytes, where every dialect puts its usage object. When the upstream
// reported nothing, the counts are estimated locally and marked so.

// bodyTailSize is how much of a verbatim body's end bodyTail keeps. The
// usage object and what follows it (Responses echoes metadata after it)
// fit in it.
const bodyTailSize = 8 << 10

// bodyTail keeps the last bodyTailSize bytes of a body relayed verbatim,
// in a ring. With a declared length, bytes before the last window are
// skipped without copying. The ring is taken from tailRings on the first
// byte kept and given back by reset, so only the exchanges relaying a
// whole body hold one: a stream, which most requests in flight are,
// never does.
type bodyTail struct {
	buf  *[bodyTailSize]byte // nil until a byte is kept
	seen int64               // bytes of the body seen so far
	size int64               // the declared length, or -1
	done bool                // the body was read to its end
}

// tailRings holds the rings of bodyTails not in use.
var tailRings = sync.Pool{New: func() any { return new([bodyTailSize]byte) }}

// reset forgets the body and gives the ring back; size is the next body's
// declared length, or -1.
func (t *bodyTail) reset(size int64) {
	if t.buf != nil {
		tailRings.Put(t.buf)
		t.buf = nil
	}
	t.seen, t.size, t.done = 0, size, false
}

// write notes b, the next bytes of the body.
func (t *bodyTail) write(b []byte) {
	if t.size >= 0 {
		if skip := t.size - bodyTailSize - t.seen; skip > 0 {
			if skip >= int64(len(b)) {
				t.seen += int64(len(b))
				return
			}
			b = b[skip:]
			t.seen += skip
		}
	}
	if len(b) > bodyTailSize {
		t.seen += int64(len(b) - bodyTailSize)
		b = b[len(b)-bodyTailSize:]
	}
	if len(b) > 0 && t.buf == nil {
		t.buf = tailRings.Get().(*[bodyTailSize]byte)
	}
	for len(b) > 0 {
		c := copy(t.buf[t.seen%bodyTailSize:], b)
		b = b[c:]
		t.seen += int64(c)
	}
}

// whole returns the kept bytes when the ring has not wrapped (a body no
// longer than bodyTailSize), a view valid until the next write; else nil.
func (t *bodyTail) whole() []byte {
	if t.seen > bodyTailSize {
		return nil
	}
	if t.buf == nil {
		return []byte{}
	}
	return t.buf[:t.seen]
}

// appendTo appends the kept bytes in order.
func (t *bodyTail) appendTo(dst []byte) []byte {
	if t.buf == nil {
		return dst
	}
	if t.seen <= bodyTailSize {
		return append(dst, t.buf[:t.seen]...)
	}
	pos := t.seen % bodyTailSize
	dst = append(dst, t.buf[pos:]...)
	return append(dst, t.buf[:pos]...)
}

// settleUsage fills x.usage once the response is over: from the
// translator, the same-dialect tail or the verbatim body's end, else a
// local estimate for a successful generation. It runs in release, before
// the request body is let go (the estimate counts it).
func (x *exchange) settleUsage() {
	switch {
	case x.ts != nil:
		x.usage = x.ts.Usage()
		return
	case x.counting || x.rt == nil || x.rt.op != opGenerate || x.target.Provider == nil:
		return
	case x.sameTail != nil:
		x.usage = x.sameTail.Usage()
	case x.bodyTail.done:
		b := x.bodyTail.whole()
		if b == nil { // the ring wrapped: put it in order
			x.out = x.bodyTail.appendTo(x.out[:0])
			b = x.out
		}
		x.usage = translate.BodyUsage(x.rt.dialect, b)
	}
	if !x.usage.Known && x.status == 200 && x.result == resultOK {
		x.estimateUsage()
	}
}

// estimateUsage counts the request locally, and the output text the
// same-dialect tail counted, for an upstream that reported no usage.
func (x *exchange) estimateUsage() {
	if x.inTokens == 0 { // else counted at admission
		if err := translate.DecodeRequest(x.rt.dialect, &x.req, x.body); err != nil {
			return
		}
	}
	x.usage = codec.Usage{Input: x.InputTokens(), Output: x.estOut, Known: true, Estimated: true}
}
