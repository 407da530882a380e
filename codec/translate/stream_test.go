package translate

import (
	"strconv"
	"strings"
	"testing"

	"slipstream/codec"
)

// fakeDecoder turns an event named after a kind ("start", "text", ...) into
// that Event, with data as Text; "usage" carries Output = len(data).
type fakeDecoder struct{ ended bool }

func (d *fakeDecoder) Reset() { d.ended = false }

func (d *fakeDecoder) DecodeEvent(dst []codec.Event, name, data []byte) ([]codec.Event, error) {
	ev := codec.Event{Text: data}
	switch string(name) {
	case "start":
		ev.Kind = codec.EventStart
	case "text":
		ev.Kind = codec.EventText
	case "usage":
		ev.Kind = codec.EventUsage
		ev.Usage = codec.Usage{Input: 7, Output: int64(len(data)), Known: true}
	case "finish":
		ev.Kind = codec.EventFinish
	case "end":
		ev.Kind = codec.EventEnd
	case "error":
		ev.Kind = codec.EventError
		ev.Err = codec.Error{Status: 500, Message: data}
	default:
		return dst, nil
	}
	return append(dst, ev), nil
}

func (d *fakeDecoder) DecodeBody(dst []codec.Event, body []byte) ([]codec.Event, error) {
	dst, _ = d.DecodeEvent(dst, []byte("start"), nil)
	dst, _ = d.DecodeEvent(dst, []byte("text"), body)
	dst, _ = d.DecodeEvent(dst, []byte("finish"), nil)
	return d.DecodeEvent(dst, []byte("end"), nil)
}

// End closes a stream that had no "end" event, as Gemini's decoder does.
func (d *fakeDecoder) End(dst []codec.Event) []codec.Event {
	if d.ended {
		return dst
	}
	d.ended = true
	return append(dst, codec.Event{Kind: codec.EventFinish}, codec.Event{Kind: codec.EventEnd})
}

// fakeEncoder writes one token per event: kind name, with text, usage or
// error message.
type fakeEncoder struct{ done bool }

func (e *fakeEncoder) Reset(*codec.Request, bool) { e.done = false }
func (e *fakeEncoder) Done() bool                 { return e.done }

func (e *fakeEncoder) Append(dst []byte, ev *codec.Event) []byte {
	switch ev.Kind {
	case codec.EventStart:
		dst = append(dst, "start;"...)
	case codec.EventText:
		dst = append(append(append(dst, "text:"...), ev.Text...), ';')
	case codec.EventUsage:
		dst = append(dst, "usage:"...)
		dst = strconv.AppendInt(dst, ev.Usage.Input, 10)
		dst = append(dst, '/')
		dst = strconv.AppendInt(dst, ev.Usage.Output, 10)
		if ev.Usage.Estimated {
			dst = append(dst, '~')
		}
		dst = append(dst, ';')
	case codec.EventFinish:
		dst = append(dst, "finish;"...)
	case codec.EventEnd:
		e.done = true
		dst = append(dst, "end;"...)
	case codec.EventError:
		e.done = true
		dst = append(append(append(dst, "error:"...), ev.Err.Message...), ';')
	}
	return dst
}

// byteCounter counts one token per byte of output and reports input
// tokens as given.
type byteCounter struct{ input int64 }

func (c byteCounter) Count(text []byte) int { return len(text) }
func (c byteCounter) InputTokens() int64    { return c.input }

// inputOnly estimates input and counts no output.
type inputOnly struct{ input int64 }

func (inputOnly) Count([]byte) int     { return 0 }
func (c inputOnly) InputTokens() int64 { return c.input }

func fakeStream(end bool) *Stream {
	s := &Stream{dec: new(fakeDecoder), enc: new(fakeEncoder)}
	if end {
		s.end = s.dec.(ender)
	}
	return s
}

func TestStreamEvents(t *testing.T) {
	f := func(events string, c Estimator, ender bool, want string, wantUsage codec.Usage) {
		t.Helper()
		s := fakeStream(ender)
		if c != nil {
			s.SetEstimate(c)
		}
		var out []byte
		for _, ev := range splitEvents(events) {
			var err error
			if out, err = s.AppendEvent(out, []byte(ev[0]), []byte(ev[1])); err != nil {
				t.Fatal(err)
			}
		}
		out = s.AppendEnd(out)
		if string(out) != want {
			t.Errorf("events %q:\n got %s\nwant %s", events, out, want)
		}
		if s.Usage() != wantUsage {
			t.Errorf("events %q: usage %+v, want %+v", events, s.Usage(), wantUsage)
		}
		if !s.Done() {
			t.Errorf("events %q: not done after AppendEnd", events)
		}
	}
	none := codec.Usage{}
	// Upstream usage passes through; no estimate is inserted.
	f("start text=hi usage=abc finish end", byteCounter{100}, false,
		"start;text:hi;usage:7/3;finish;end;", codec.Usage{Input: 7, Output: 3, Known: true})
	// No upstream usage: the estimate goes right before EventEnd.
	f("start text=hello text=you finish end", byteCounter{100}, false,
		"start;text:hello;text:you;finish;usage:100/8~;end;", codec.Usage{Input: 100, Output: 8, Known: true, Estimated: true})
	// An estimator may count input only.
	f("start text=hello finish end", inputOnly{100}, false,
		"start;text:hello;finish;usage:100/0~;end;", codec.Usage{Input: 100, Known: true, Estimated: true})
	// Without SetEstimate nothing is inserted.
	f("start text=hello finish end", nil, false, "start;text:hello;finish;end;", none)
	// Truncated: AppendEnd writes the in-band error.
	f("start text=hel", nil, false, "start;text:hel;error:upstream stream ended before its terminal event;", none)
	// A decoder with End closes the stream itself (Gemini), estimate included.
	f("start text=abcd", byteCounter{100}, true,
		"start;text:abcd;finish;usage:100/4~;end;", codec.Usage{Input: 100, Output: 4, Known: true, Estimated: true})
	// Nothing after the terminal event.
	f("start text=a finish end text=b", nil, false, "start;text:a;finish;end;", none)
	f("start error=boom text=b", nil, false, "start;error:boom;", none)
}

// callCounter counts one token per byte, and how often it was asked.
type callCounter struct{ calls, bytes int }

func (c *callCounter) Count(text []byte) int { c.calls++; c.bytes += len(text); return len(text) }
func (c *callCounter) InputTokens() int64    { return 1 }

// TestStreamCountsOnlyWhenNeeded: the output text of a stream whose
// upstream reports usage is not counted while it is short, and a long
// one is counted in batches, never per delta; without usage the
// estimate covers every byte relayed.
func TestStreamCountsOnlyWhenNeeded(t *testing.T) {
	run := func(usage bool, deltas int) *callCounter {
		c := new(callCounter)
		s := fakeStream(false)
		s.SetEstimate(c)
		evs := "start"
		for range deltas {
			evs += " text=" + strings.Repeat("x", 100)
		}
		if usage {
			evs += " usage=abc"
		}
		evs += " finish end"
		for _, ev := range splitEvents(evs) {
			if _, err := s.AppendEvent(nil, []byte(ev[0]), []byte(ev[1])); err != nil {
				t.Fatal(err)
			}
		}
		if !usage && s.Usage().Output != int64(100*deltas) {
			t.Fatalf("%d deltas without usage: estimated output %d, want %d", deltas, s.Usage().Output, 100*deltas)
		}
		return c
	}
	if c := run(true, 20); c.calls != 0 {
		t.Errorf("a short stream with usage was counted %d times", c.calls)
	}
	if c := run(true, 200); c.calls == 0 || c.calls > 200*100/countBatch {
		t.Errorf("a long stream with usage was counted %d times for %d bytes", c.calls, c.bytes)
	}
	if c := run(false, 200); c.calls > 200*100/countBatch+1 {
		t.Errorf("a long stream without usage was counted %d times", c.calls)
	}
}

func TestStreamAppendError(t *testing.T) {
	s := fakeStream(false)
	out, _ := s.AppendEvent(nil, []byte("start"), nil)
	e := codec.Error{Status: 502, Message: []byte("reset by peer")}
	out = s.AppendError(out, &e)
	out = s.AppendError(out, &e) // no second error
	out = s.AppendEnd(out)       // nor a truncation error
	if want := "start;error:reset by peer;"; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

func TestStreamBody(t *testing.T) {
	s := fakeStream(false)
	s.SetEstimate(byteCounter{5})
	out, err := s.AppendBody(nil, []byte("whole"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "start;text:whole;finish;usage:5/5~;end;"; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

func TestUnsupportedStream(t *testing.T) {
	s := AcquireStream(codec.DialectUnknown, codec.DialectUnknown, nil, true)
	if _, err := s.AppendEvent(nil, nil, []byte("{}")); err == nil {
		t.Error("AppendEvent on an unsupported pair succeeded")
	}
	out := s.AppendEnd(nil)
	if len(out) == 0 || !s.Done() {
		t.Errorf("AppendEnd on an unsupported pair wrote %q, done %v", out, s.Done())
	}
	ReleaseStream(s)
}

// splitEvents parses "name=data name ..." into (name, data) pairs.
func splitEvents(s string) [][2]string {
	var evs [][2]string
	for _, f := range splitSpace(s) {
		name, data := f, ""
		for i := 0; i < len(f); i++ {
			if f[i] == '=' {
				name, data = f[:i], f[i+1:]
				break
			}
		}
		evs = append(evs, [2]string{name, data})
	}
	return evs
}

func splitSpace(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

// TestBodyFailure: a non-streamed upstream body that decodes to a failure
// (cut before its end, empty, an error object) is reported by Failure, so
// the server answers an error status instead of a 200 carrying the
// client's error object.
func TestBodyFailure(t *testing.T) {
	f := func(upstream codec.Dialect, body string, wantFail bool) {
		t.Helper()
		var r codec.Request
		r.Model = []byte("m")
		s := AcquireStream(codec.DialectChat, upstream, &r, false)
		defer ReleaseStream(s)
		if _, err := s.AppendBody(nil, []byte(body)); err != nil {
			if !wantFail {
				t.Errorf("%s body %q: %v", upstream, body, err)
			}
			return
		}
		e := s.Failure()
		if (e != nil) != wantFail {
			t.Errorf("%s body %q: Failure %v, want failure %v", upstream, body, e, wantFail)
		}
		if e != nil && e.Status < 400 {
			t.Errorf("%s body %q: failure status %d", upstream, body, e.Status)
		}
	}
	f(codec.DialectGemini, ``, true)
	f(codec.DialectGemini, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]}`, true)
	f(codec.DialectGemini, `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`, true)
	f(codec.DialectGemini, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP","index":0}]}`, false)
	f(codec.DialectAnthropic, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`, true)
	f(codec.DialectAnthropic, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`, false)
}

// TestStreamErrorPrefix: with SetErrorPrefix every error the Stream writes
// starts with the prefix once: its own truncation error, the decoder's,
// and one passed in, named already or not.
func TestStreamErrorPrefix(t *testing.T) {
	f := func(events string, appendErr string, want string) {
		t.Helper()
		s := fakeStream(false)
		s.SetErrorPrefix([]byte("provider p: "))
		var out []byte
		for _, ev := range splitEvents(events) {
			out, _ = s.AppendEvent(out, []byte(ev[0]), []byte(ev[1]))
		}
		if appendErr != "" {
			e := codec.Error{Status: 502, Message: []byte(appendErr)}
			out = s.AppendError(out, &e)
		}
		out = s.AppendEnd(out)
		if string(out) != want {
			t.Errorf("%q + %q:\n got %s\nwant %s", events, appendErr, out, want)
		}
	}
	f("start text=hel", "", "start;text:hel;error:provider p: upstream stream ended before its terminal event;")
	f("start error=boom", "", "start;error:provider p: boom;")
	f("start", "reset", "start;error:provider p: reset;")
	f("start", "provider p: reset", "start;error:provider p: reset;")
}
