package translate

import (
	"bytes"
	"sync"

	"slipstream/codec"
)

// Estimator supplies the local counts of usage fill-in (the server's
// exchange implements it with the tokenizer).
type Estimator interface {
	// Count returns the tokens of escaped text the Stream relayed.
	Count(text []byte) int
	// InputTokens returns the request's token count; it is called at most
	// once per Stream, and only when the upstream sent no usage.
	InputTokens() int64
}

// truncated is the message of the in-band error AppendEnd writes when an
// upstream stream closed before its terminal event.
var truncated = []byte("upstream stream ended before its terminal event")

// Stream translates one upstream response (streamed or not) to the client's
// dialect. It is a typed state machine: a concrete Decoder for the upstream
// dialect, a concrete Encoder for the client dialect, and a reused
// []codec.Event. Streams are pooled per (client, upstream) pair; in steady
// state an event costs no allocation.
//
// A Stream is used by one goroutine. Get one with AcquireStream and give it
// back with ReleaseStream.
type Stream struct {
	noCopy noCopy

	client, upstream codec.Dialect
	dec              codec.Decoder
	enc              codec.Encoder
	end              ender // dec when it needs the end of input, else nil

	events []codec.Event
	ev     codec.Event // scratch event for the ones the Stream makes itself

	usage codec.Usage
	// failed marks that the error of an unsupported pair was written.
	failed bool
	// failure is the upstream error event that ended the output, when
	// hasFailure is set; its Message is a view into the upstream input.
	failure    codec.Error
	hasFailure bool
	// prefix starts every error message the Stream writes (SetErrorPrefix);
	// msg holds a prefixed message.
	prefix, msg []byte

	estimate Estimator // nil: no usage fill-in
	output   int64     // tokens counted in the relayed text so far
	pending  []byte    // relayed text not counted yet (at most countBatch bytes)

	// Replay-token tagging (origin.go).
	tagBuf   []byte
	tagBlock int
	tagged   bool
}

// ender is implemented by decoders whose dialect has no terminal event
// (Gemini): End appends the Events that close the response.
type ender interface {
	End(dst []codec.Event) []codec.Event
}

var streamPools [codec.NumDialects][codec.NumDialects]sync.Pool

// AcquireStream returns a Stream translating an upstream response of
// dialect upstream into the client dialect client, for the client request
// req (neutral form; borrowed until ReleaseStream: it gives the encoder the
// client-facing model, the custom tools, include_usage and Created).
// stream says whether the client output is SSE or one JSON body.
//
// Both dialects must be Supported; otherwise every Append method writes
// only an error.
func AcquireStream(client, upstream codec.Dialect, req *codec.Request, stream bool) *Stream {
	var s *Stream
	if int(client) < codec.NumDialects && int(upstream) < codec.NumDialects {
		if v := streamPools[client][upstream].Get(); v != nil {
			s = v.(*Stream)
		}
	}
	if s == nil {
		s = newStream(client, upstream)
	}
	if s.dec != nil {
		s.dec.Reset()
	}
	if s.enc != nil {
		s.enc.Reset(req, stream)
	}
	return s
}

// newStream makes a Stream with the concrete decoder and encoder of the
// pair, or nil ones when a dialect is not wired.
func newStream(client, upstream codec.Dialect) *Stream {
	s := &Stream{client: client, upstream: upstream}
	if !streamsWired(client) || !streamsWired(upstream) {
		return s
	}
	c, u := row(client), row(upstream)
	s.dec = u.newDecoder()
	s.enc = c.newEncoder()
	s.end, _ = s.dec.(ender)
	return s
}

// ReleaseStream returns s to its pool; s must not be used after.
func ReleaseStream(s *Stream) {
	if s == nil {
		return
	}
	s.reset()
	if s.dec == nil || s.enc == nil {
		return
	}
	streamPools[s.client][s.upstream].Put(s)
}

// reset drops every reference s holds into a finished response.
func (s *Stream) reset() {
	clear(s.events[:cap(s.events)])
	s.events = s.events[:0]
	s.ev = codec.Event{}
	s.usage = codec.Usage{}
	s.failed = false
	s.failure, s.hasFailure = codec.Error{}, false
	s.prefix = nil
	if cap(s.msg) > 64<<10 {
		s.msg = nil
	}
	s.estimate, s.output = nil, 0
	s.pending = s.pending[:0]
	s.tagged, s.tagBlock = false, 0
	if cap(s.tagBuf) > 64<<10 {
		s.tagBuf = nil
	}
	if s.dec != nil {
		s.dec.Reset()
	}
	if s.enc != nil {
		s.enc.Reset(nil, false)
	}
}

// SetEstimate arranges usage fill-in: if the upstream sends no usage by
// EventEnd, the Stream inserts an EventUsage{Estimated: true} whose Input
// is e.InputTokens() (asked only then, so a request whose upstream reports
// usage is never counted) and whose Output is e.Count over the text,
// thinking and tool-argument deltas relayed while no usage was known
// (joined, and counted in batches of up to countBatch bytes). Call
// it before the first Append; e is borrowed until ReleaseStream.
func (s *Stream) SetEstimate(e Estimator) { s.estimate = e }

// AppendEvent translates one upstream SSE event (name nil when absent) and
// appends the client's bytes to dst. name and data are only read during
// the call. An error means the upstream event was malformed: nothing was
// appended for it, and the caller ends the output with AppendError.
func (s *Stream) AppendEvent(dst []byte, name, data []byte) ([]byte, error) {
	if s.dec == nil {
		return dst, ErrUnsupported
	}
	var err error
	s.events, err = s.dec.DecodeEvent(s.events[:0], name, data)
	if err != nil {
		return dst, err
	}
	return s.emit(dst), nil
}

// AppendBody translates a whole non-streamed upstream body and appends the
// client's bytes to dst. An error means the body was malformed; nothing was
// appended, and the caller answers with AppendError.
func (s *Stream) AppendBody(dst []byte, body []byte) ([]byte, error) {
	if s.dec == nil {
		return dst, ErrUnsupported
	}
	var err error
	s.events, err = s.dec.DecodeBody(s.events[:0], body)
	if err != nil {
		return dst, err
	}
	return s.emit(dst), nil
}

// SetErrorPrefix makes every error the Stream writes (the upstream's own,
// the decoder's for a cut input, the one AppendEnd writes for a
// truncation, the ones passed to AppendError) start with prefix, e.g.
// "provider NAME: ", unless its message already does, so that the client
// can tell which upstream failed. prefix is borrowed until ReleaseStream.
func (s *Stream) SetErrorPrefix(prefix []byte) { s.prefix = prefix }

// name prefixes e's message, in s.msg.
func (s *Stream) name(e *codec.Error) {
	if len(s.prefix) == 0 || bytes.HasPrefix(e.Message, s.prefix) {
		return
	}
	s.msg = append(append(s.msg[:0], s.prefix...), e.Message...)
	e.Message = s.msg
}

// Failure returns the error that the upstream's input decoded to (an
// error object, or a body or stream that ended before its end), or nil.
// A non-streamed reply must carry it as an error status, not as a 200
// whose body is the client's error object. The result and its Message are
// valid until the next Append call or ReleaseStream.
func (s *Stream) Failure() *codec.Error {
	if !s.hasFailure {
		return nil
	}
	return &s.failure
}

// AppendEnd is called when the upstream stream closed. It lets decoders
// that have no terminal event (Gemini) finish, and if the client output is
// still not Done it appends the client dialect's in-band error for a
// truncated stream.
func (s *Stream) AppendEnd(dst []byte) []byte {
	if s.end != nil && !s.Done() {
		s.events = s.end.End(s.events[:0])
		dst = s.emit(dst)
	}
	if s.Done() {
		return dst
	}
	s.ev = codec.Event{Kind: codec.EventError, Err: codec.Error{Status: 502, Kind: codec.ErrAPI, Message: truncated}}
	return s.appendEv(dst, &s.ev)
}

// AppendError ends the client output with e (an upstream failure after
// headers were sent, or a malformed upstream event). e's byte fields are
// only read during the call. Nothing is written if the output is Done.
func (s *Stream) AppendError(dst []byte, e *codec.Error) []byte {
	if s.Done() {
		return dst
	}
	s.ev = codec.Event{Kind: codec.EventError, Err: *e}
	dst = s.appendEv(dst, &s.ev)
	s.ev = codec.Event{}
	return dst
}

// appendEv writes one event the Stream made itself.
func (s *Stream) appendEv(dst []byte, ev *codec.Event) []byte {
	if ev.Kind == codec.EventError {
		s.name(&ev.Err)
	}
	if s.enc == nil {
		s.failed = true
		return appendFallbackError(dst, &ev.Err)
	}
	return s.enc.Append(dst, ev)
}

// Done reports whether the client output is complete (terminal event or
// error written).
func (s *Stream) Done() bool {
	if s.enc == nil {
		return s.failed
	}
	return s.enc.Done()
}

// Usage returns the usage seen so far (Known false if the upstream sent
// none and no estimate was inserted yet).
func (s *Stream) Usage() codec.Usage { return s.usage }

// emit encodes s.events, watching usage on the way and inserting the
// estimate before EventEnd when the upstream sent none.
func (s *Stream) emit(dst []byte) []byte { return s.emitEvents(dst, s.events) }

// emitEvents is emit over any events (AppendEvents passes its own).
func (s *Stream) emitEvents(dst []byte, evs []codec.Event) []byte {
	for i := range evs {
		if s.enc.Done() {
			break
		}
		ev := &evs[i]
		if ev.Kind == codec.EventSignature || ev.Kind == codec.EventRedacted {
			s.tagToken(ev)
		}
		if ev.Kind == codec.EventError {
			s.name(&ev.Err)
		}
		s.observe(ev)
		if ev.Kind == codec.EventEnd && s.estimate != nil && !s.usage.Known {
			s.countPending()
			dst = s.appendEstimate(dst)
		}
		dst = s.enc.Append(dst, ev)
	}
	return dst
}

// observe tracks usage and, when estimating, counts relayed output.
func (s *Stream) observe(ev *codec.Event) {
	switch ev.Kind {
	case codec.EventStart, codec.EventUsage, codec.EventFinish:
		s.usage.Merge(&ev.Usage)
	case codec.EventError:
		s.failure, s.hasFailure = ev.Err, true
	case codec.EventText, codec.EventThinking, codec.EventToolArgs:
		if s.estimate != nil && !s.usage.Known && len(ev.Text) > 0 {
			s.pend(ev.Text)
		}
	}
}

// countBatch is how much relayed text a Stream keeps before it counts it.
// Most upstreams report usage at the end of the stream: a short answer is
// then never counted, and a long one in few calls instead of one per
// delta.
const countBatch = 4 << 10

// pend adds text to what is counted if the upstream reports no usage.
func (s *Stream) pend(text []byte) {
	if len(s.pending)+len(text) > countBatch {
		s.countPending()
		if len(text) > countBatch {
			s.output += int64(s.estimate.Count(text))
			return
		}
	}
	s.pending = append(s.pending, text...)
}

// countPending counts the text pend kept.
func (s *Stream) countPending() {
	if len(s.pending) > 0 {
		s.output += int64(s.estimate.Count(s.pending))
		s.pending = s.pending[:0]
	}
}

// appendEstimate writes the EventUsage that stands in for the upstream's.
func (s *Stream) appendEstimate(dst []byte) []byte {
	s.ev = codec.Event{Kind: codec.EventUsage, Usage: codec.Usage{Input: s.estimate.InputTokens(), Output: s.output, Known: true, Estimated: true}}
	s.usage.Merge(&s.ev.Usage)
	return s.enc.Append(dst, &s.ev)
}

// noCopy makes go vet's copylocks check flag copies of a Stream.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
