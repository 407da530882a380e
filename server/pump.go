package server

import (
	"io"

	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
	"slipstream/server/upstream"
)

// The stream pump relays an upstream event stream to a sink, one upstream
// event at a time, with the rules every stream shares:
//
//   - an event cut off mid-way (the stream ended inside it) is never
//     relayed: the stream failed;
//   - only data events hold timeouts.idle off (upstream.Pace/Progress):
//     keep-alives do not keep a silent stream alive;
//   - events that arrived together leave together, in one write to the
//     client, and none waits for a later upstream read (relayOut);
//   - a stream that ends before its terminal event ends the client's
//     stream with the dialect's in-band error (streamFailure), and a read
//     error or a malformed event is recorded as why the upstream body was
//     not read to its end.
//
// What differs between the same-dialect and the translated path is the
// step taken per event, and what ends a stream cleanly: relayStep.
type relayStep interface {
	// more reports whether the pump reads on: the translated path stops
	// at its terminal event, the same-dialect one reads to the end.
	more(x *exchange) bool
	// event relays ev to out (by value: a pointer would escape through
	// the interface, one allocation per event). err is a malformed event (recorded as the
	// read error); next says whether the pump goes on, stops at the end
	// rules, or returns at once (the client is gone).
	event(x *exchange, ev sse.Event, out sink) (next pumpNext, err error)
	// done reports whether the client's stream got its terminal event.
	done(x *exchange) bool
	// appendEnd appends what ends a stream that ended cleanly without a
	// terminal event, and reports whether such an end is clean (ok false:
	// it is a truncation, reported with appendError).
	appendEnd(x *exchange, dst []byte) (out []byte, ok bool)
	// appendError appends e as the client dialect's in-band error.
	// (by value, for the same reason as event).
	appendError(x *exchange, dst []byte, e codec.Error) []byte
}

// pumpNext is what the pump does after a step.
type pumpNext uint8

const (
	pumpOn     pumpNext = iota // read the next event
	pumpEnd                    // stop reading; apply the end rules
	pumpReturn                 // the client is gone: stop at once
)

// pump relays x's upstream event stream to out with step st.
func (x *exchange) pump(out sink, st relayStep) {
	x.rd.Reset(x.upstreamEvents())
	x.watch.start(x)
	defer x.watch.stop()
	upstream.Pace(x.upResp.LocalAddr())
	var readErr error
	cut := false
	for st.more(x) {
		ev, err := x.rd.Next()
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		if ev.Partial {
			cut = true // cut off mid-event: never relay half an event
			break
		}
		// Here rather than in a step: the deadline update runs deep in
		// the runtime, and one frame less keeps a stream's goroutine
		// within its first stack (no stack copy per stream).
		x.progress(&ev)
		next, err := st.event(x, ev, out)
		if err != nil {
			readErr = err
		}
		if next == pumpReturn {
			return
		}
		if next == pumpEnd {
			break
		}
	}
	x.endPump(out, st, readErr, cut)
}

// endPump applies the end rules to a stream the pump stopped reading.
func (x *exchange) endPump(out sink, st relayStep, readErr error, cut bool) {
	if readErr != nil {
		x.upErr = readErr
	}
	if st.done(x) {
		return
	}
	clean := false
	if readErr == nil && !cut {
		x.out, clean = st.appendEnd(x, x.out[:0])
	}
	if !clean {
		x.result = resultUpstreamFailed
		e := x.streamFailure(readErr)
		x.out = st.appendError(x, x.out[:0], e)
	}
	// Only a Gemini stream has no terminal event of its own: any other
	// that ended here was truncated, and the clean end said so in-band.
	if flushOut(out, x.out) && clean && x.target.Provider.Dialect != codec.DialectGemini {
		x.result = resultUpstreamFailed
	}
}

// progress tells the upstream's idle timer a data event arrived.
func (x *exchange) progress(ev *sse.Event) {
	if !ev.IsKeepAlive() {
		upstream.Progress(x.upResp.LocalAddr())
	}
}

// relayOut writes b, the client events made of one upstream event, and
// flushes them unless the next upstream event is already buffered: events
// that arrived together leave together, in one write to the client, and
// none waits for a later read from the upstream.
func (x *exchange) relayOut(out sink, ok bool) pumpNext {
	if ok && (x.rd.Ready() || x.liveFlush(out)) {
		return pumpOn
	}
	return pumpReturn
}

// passStep is the same-dialect step: each event is checked, watched by
// the dialect's tail (usage, terminal event, output text) and relayed
// verbatim.
type passStep struct{}

func (passStep) more(*exchange) bool { return true }

func (passStep) event(x *exchange, ev sse.Event, out sink) (pumpNext, error) {
	if !translate.ValidRelayed(x.rt.dialect, &ev) {
		return pumpEnd, errMalformedEvent // never relayed; the stream ends here
	}
	t := x.sameTail
	t.Observe(ev.Name, ev.Data)
	if txt := t.Text(); len(txt) > 0 {
		x.estOut += int64(x.Count(txt))
	}
	return x.relayOut(out, out.Event(ev.Name, ev.Data, ev.Raw)), nil
}

func (passStep) done(x *exchange) bool { return x.sameTail.Done() }

func (passStep) appendEnd(_ *exchange, dst []byte) ([]byte, bool) { return dst, false }

func (passStep) appendError(x *exchange, dst []byte, e codec.Error) []byte {
	return x.sameTail.AppendError(dst, &e)
}

// translateStep is the translated step: each data event is translated
// into the client's events (comments are not relayed); a malformed event
// ends the client's stream with an in-band error.
type translateStep struct{}

func (translateStep) more(x *exchange) bool { return !x.ts.Done() }

func (translateStep) event(x *exchange, ev sse.Event, out sink) (pumpNext, error) {
	if ev.IsComment() {
		return pumpOn, nil
	}
	var err error
	x.out, err = x.ts.AppendEvent(x.out[:0], ev.Name, ev.Data)
	if err != nil {
		e := codec.Error{Status: fasthttp.StatusBadGateway, Kind: codec.ErrAPI, Message: x.named(msgMalformed)}
		x.out = x.ts.AppendError(x.out, &e)
	}
	if len(x.out) == 0 {
		return pumpOn, err
	}
	return x.relayOut(out, out.Events(x.out)), err
}

func (translateStep) done(x *exchange) bool { return x.ts.Done() }

func (translateStep) appendEnd(x *exchange, dst []byte) ([]byte, bool) {
	return x.ts.AppendEnd(dst), true
}

func (translateStep) appendError(x *exchange, dst []byte, e codec.Error) []byte {
	return x.ts.AppendError(dst, &e)
}
