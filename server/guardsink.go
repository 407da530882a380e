package server

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/guard"
	"slipstream/pool"
)

// guardSink is the relay's guardrail step over response content, a sink
// in front of the transport's: in every content delta of the client's
// dialect (codec.Delta) it redacts the secrets the model writes (the
// request's rule set, as a stream: guard.Scanner) and then puts back the
// values of the placeholders this key's requests were given by rules
// that restore (guard.Restorer); every other event is searched whole.
// Same-dialect and translated streams, HTTP and WebSocket, pass through it
// alike: it sees the events the client gets.
//
// A delta whose end may be the start of a secret or a placeholder is
// emitted with what is certain and kept back (pending) until the next
// event, so that a later flush of the held bytes still lands in it: no
// event is invented, dropped or reordered, and an event that cannot be
// part of a match passes at once, byte for byte.
type guardSink struct {
	x     *exchange
	inner sink
	set   *guard.Set
	d     codec.Dialect

	sc     *guard.Scanner  // the current delta stream's redaction, or nil
	rs     *guard.Restorer // the current delta stream's restore, or nil
	key    int64           // the current delta stream
	levels int             // its escaping
	open   bool            // a delta stream is current
	found  int             // sc's matches counted in /metrics

	pend    []byte // the pending event's name, data before its delta, and data after it
	pendN   int    // name is pend[:pendN]
	pendPre int    // data before the delta is pend[pendN:pendPre]
	pendTxt []byte // the pending event's delta as emitted so far
	pending bool

	buf  []byte // scratch: a delta's output, a value restored
	red  []byte // scratch: a value redacted
	out  []byte // scratch: events built
	data []byte // scratch: an event's data lines joined
	strs []codec.Delta
}

var _ sink = (*guardSink)(nil)

// guardRelay returns the sink the relay writes to: out itself when no
// guardrail applies to this response, else x's guardSink in front of it.
func (x *exchange) guardRelay(out sink) sink {
	set := x.guard.set
	if set == nil {
		return out
	}
	g := x.guardSink()
	g.x, g.inner, g.set, g.d = x, out, set, x.rt.dialect
	return g
}

// guardSink is x's guardSink, made on first use and kept with the pooled
// exchange: an exchange that never ran a guardrail does not carry one.
func (x *exchange) guardSink() *guardSink {
	if x.gsink == nil {
		x.gsink = &guardSink{}
	}
	return x.gsink
}

// Reset forgets the stream and keeps the scratch.
func (g *guardSink) Reset() {
	g.closeDelta()
	g.x, g.inner, g.set = nil, nil, nil
	g.pending, g.open = false, false
	g.pend, g.pendTxt = g.pend[:0], g.pendTxt[:0]
	g.buf, g.out, g.red = trimScratch(g.buf), trimScratch(g.out), trimScratch(g.red)
	g.strs = g.strs[:0]
}

func (g *guardSink) Gone() <-chan struct{} { return g.inner.Gone() }

func (g *guardSink) Flush() bool { return g.inner.Flush() }

// Event guards one relayed upstream event.
func (g *guardSink) Event(name, data, raw []byte) bool {
	if data == nil {
		return g.boundary() && g.inner.Event(name, data, raw) // a comment
	}
	return g.event(name, data, raw)
}

// Events guards the events slipstream built (a translation, an error).
func (g *guardSink) Events(raw []byte) bool {
	for len(raw) > 0 {
		ev, rest, ok := sse.NextEvent(raw)
		if !ok {
			return g.boundary() && g.inner.Events(raw)
		}
		whole := raw[:len(raw)-len(rest)]
		raw = rest
		name, data := sse.Fields(ev, &g.data)
		if data == nil {
			if !g.boundary() || !g.inner.Events(whole) {
				return false
			}
			continue
		}
		if !g.event(name, data, whole) {
			return false
		}
	}
	return true
}

// end emits what the stream still holds; the relay is over.
func (g *guardSink) end() {
	if g.boundary() {
		g.inner.Flush()
	}
}

// event guards one event with data.
func (g *guardSink) event(name, data, raw []byte) bool {
	d, ok := translate.DeltaOf(g.d, data)
	if !ok || (g.open && d.Key != g.key) {
		if !g.boundary() {
			return false
		}
	}
	if !ok {
		return g.whole(name, data, raw)
	}
	if !g.open {
		g.openDelta(d)
	}
	if g.pending {
		// Its delta is final now: what it held is resolved in this one's.
		if !g.emitPending(nil) {
			return false
		}
	}
	delta := data[d.Start:d.End]
	g.buf = g.feed(g.buf[:0], delta)
	if g.holding() {
		g.keep(name, data, d)
		return true
	}
	if bytes.Equal(g.buf, delta) {
		return g.inner.Event(name, data, raw)
	}
	g.out = appendEventWith(g.out[:0], name, data, d, g.buf)
	return g.inner.Events(g.out)
}

// feed runs delta through the stream's redaction then its restore.
func (g *guardSink) feed(dst, delta []byte) []byte {
	if g.sc != nil {
		n := len(g.out)
		g.out = g.sc.Feed(g.out, delta)
		delta = g.out[n:]
		g.noteFound()
	}
	if g.rs != nil {
		return g.rs.Feed(dst, delta)
	}
	return append(dst, delta...)
}

// holding reports whether the stream's steps hold bytes back.
func (g *guardSink) holding() bool {
	return (g.sc != nil && g.sc.Holding()) || (g.rs != nil && g.rs.Holding())
}

// keep makes the event pending: its name, the data around its delta and
// the delta's output so far.
func (g *guardSink) keep(name, data []byte, d codec.Delta) {
	g.pend = append(append(g.pend[:0], name...), data[:d.Start]...)
	g.pendN, g.pendPre = len(name), len(name)+d.Start
	g.pend = append(g.pend, data[d.End:]...)
	g.pendTxt = append(g.pendTxt[:0], g.buf...)
	g.pending = true
}

// emitPending sends the pending event with tail added to its delta.
func (g *guardSink) emitPending(tail []byte) bool {
	g.pending = false
	name := g.pend[:g.pendN]
	g.pendTxt = append(g.pendTxt, tail...)
	g.out = appendEventStart(g.out[:0], name)
	g.out = append(g.out, g.pend[g.pendN:g.pendPre]...)
	g.out = append(g.out, g.pendTxt...)
	g.out = append(g.out, g.pend[g.pendPre:]...)
	g.out = sse.AppendEventEnd(g.out)
	return g.inner.Events(g.out)
}

// boundary ends the current delta stream: what it held goes out in its
// pending event.
func (g *guardSink) boundary() bool {
	if !g.open {
		return true
	}
	tail := g.buf[:0]
	if g.sc != nil {
		g.out = g.sc.Flush(g.out[:0])
		g.noteFound()
		if g.rs != nil {
			tail = g.rs.Feed(tail, g.out)
		} else {
			tail = append(tail, g.out...)
		}
	}
	if g.rs != nil {
		tail = g.rs.Flush(tail)
	}
	g.buf = tail
	g.closeDelta()
	if !g.pending {
		return true // nothing was held: the last delta went out whole
	}
	return g.emitPending(g.buf)
}

// whole guards an event that is not a delta: every string in it at once.
func (g *guardSink) whole(name, data, raw []byte) bool {
	txt, changed := g.guarded(data)
	if !changed {
		return g.inner.Event(name, data, raw)
	}
	g.out = appendEventStart(g.out[:0], name)
	g.out = append(g.out, txt...)
	g.out = sse.AppendEventEnd(g.out)
	return g.inner.Events(g.out)
}

// guarded returns data (a JSON value) with the secrets in its strings
// redacted and this key's placeholders restored, and whether that changed
// it. Unchanged, the answer is data itself: a value with no match and no
// placeholder is scanned once and neither copied nor parsed. Changed, it
// is g.red or g.buf, valid until the next call.
func (g *guardSink) guarded(data []byte) ([]byte, bool) {
	m := guard.AcquireMatches()
	g.set.ScanBody(data, m)
	n := m.Len()
	for k := range n {
		h := m.Hit(k)
		g.x.s.metrics.Guardrail(h.Rule, h.Action.String())
	}
	src := data
	if n > 0 {
		g.red = m.AppendRedacted(g.red[:0], data, nil, "")
		src = g.red
	}
	guard.ReleaseMatches(m)
	v := g.x.s.vault()
	if v == nil || !g.set.Restores() || !guard.HasPlaceholder(src) {
		return src, n > 0
	}
	g.strs = codec.AppendStrings(g.strs[:0], src)
	dst, last := g.buf[:0], 0
	for _, s := range g.strs {
		if !guard.HasPlaceholder(src[s.Start:s.End]) {
			continue
		}
		dst = append(dst, src[last:s.Start]...)
		dst = v.AppendRestored(dst, src[s.Start:s.End], g.x.keyName(), s.Levels)
		last = s.End
	}
	g.buf = append(dst, src[last:]...)
	return g.buf, true
}

// openDelta starts the steps of the delta stream d belongs to.
func (g *guardSink) openDelta(d codec.Delta) {
	g.open, g.key, g.levels, g.found = true, d.Key, d.Levels, 0
	g.sc = g.set.AcquireScanner()
	if v := g.x.s.vault(); v != nil && g.set.Restores() {
		g.rs = guard.AcquireRestorer(v, g.x.keyName(), d.Levels)
	}
}

// closeDelta gives the steps of the current delta stream back.
func (g *guardSink) closeDelta() {
	if g.sc != nil {
		guard.ReleaseScanner(g.sc)
		g.sc = nil
	}
	if g.rs != nil {
		guard.ReleaseRestorer(g.rs)
		g.rs = nil
	}
	g.open = false
}

// noteFound counts what the stream's scanner found since the last look.
func (g *guardSink) noteFound() {
	for ; g.found < g.sc.Found(); g.found++ {
		rule, a := g.sc.FoundRule(g.found)
		g.x.s.metrics.Guardrail(rule, a.String())
	}
}

// appendEventWith appends the event name/data with data's delta d
// replaced by txt.
func appendEventWith(dst, name, data []byte, d codec.Delta, txt []byte) []byte {
	dst = appendEventStart(dst, name)
	dst = append(dst, data[:d.Start]...)
	dst = append(dst, txt...)
	dst = append(dst, data[d.End:]...)
	return sse.AppendEventEnd(dst)
}

// appendEventStart appends an SSE event's head up to its data's first
// byte: the event line when name is not empty, then "data: ".
func appendEventStart(dst, name []byte) []byte {
	if len(name) > 0 {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	return append(dst, "data: "...)
}

// guardWhole is the relay's guardrail step over a whole JSON answer b (a
// body that is not a stream): b itself when nothing in it changes, else a
// new buffer with its secrets redacted and this key's placeholders
// restored; the buffer not returned goes back to the pool.
func (x *exchange) guardWhole(b *pool.Buffer) *pool.Buffer {
	set := x.guard.set
	if set == nil {
		return b
	}
	g := x.guardSink()
	g.x, g.set = x, set
	txt, changed := g.guarded(b.B)
	if !changed {
		return b
	}
	out := pool.Get(len(txt))
	out.B = append(out.B[:0], txt...)
	pool.Put(b)
	return out
}
