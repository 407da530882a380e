package gemini

import (
	"bytes"
	"errors"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// ErrMalformedEvent is returned by Decoder.DecodeEvent for an event whose
// data is not a JSON object.
var ErrMalformedEvent = errors.New("gemini: malformed response event")

// msgTruncated is the message of the error End reports for a stream that
// closed before a finishReason.
var msgTruncated = []byte("upstream stream ended before a finish reason")

var _ codec.Decoder = (*Decoder)(nil)

// blockKind is the kind of the output block a Decoder has open.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockThinking
	blockTool
)

// Decoder turns Gemini upstream responses into codec.Events: the events of
// a :streamGenerateContent?alt=sse stream (each a complete
// GenerateContentResponse) or one non-streamed body. Only candidate 0 is
// read.
//
// Text parts are deltas (thought:true ones EventThinking); consecutive parts
// of one kind form one block. A functionCall part is atomic: EventToolCall,
// one EventToolArgs holding the whole compacted args object as escaped JSON
// text, EventBlockStop. Its id is functionCall.id, else
// call_<responseId>_<n> with the responseId reduced to [A-Za-z0-9_-] (n
// counts calls in the response). A thoughtSignature becomes EventSignature:
// on a thought part in that thinking block; on a functionCall in a thinking
// block of its own right before the call (so that a client replaying it
// puts it back on the call); on other parts in the open thinking block, or
// one of its own, unless answer text was already relayed (then it is
// dropped: see part). The usageMetadata of the latest event is authoritative.
//
// Gemini streams have no terminal event: call End when the upstream stream
// closes. Event byte views are valid until the next call or Reset.
type Decoder struct {
	started  bool
	finished bool // a finishReason was seen
	ended    bool // EventEnd or EventError was produced

	open   blockKind
	block  int // Block of the open block
	blocks int // blocks opened so far
	calls  int // function calls seen
	texts  int // visible text deltas emitted

	usage   codec.Usage
	id      []byte // sanitised responseId, for minted call ids
	scratch []byte // minted ids and escaped args of the current call
}

// Reset prepares d for a new response, keeping its buffers.
func (d *Decoder) Reset() {
	*d = Decoder{id: d.id[:0], scratch: d.scratch[:0]}
}

// DecodeEvent appends the Events of one SSE event of the stream.
func (d *Decoder) DecodeEvent(dst []codec.Event, _, data []byte) ([]codec.Event, error) {
	d.scratch = d.scratch[:0]
	return d.decode(dst, data)
}

// DecodeBody appends the whole Event sequence of a non-streamed body (one
// GenerateContentResponse, or a JSON array of them), through EventEnd. A
// complete body without a finishReason ends as end_turn.
func (d *Decoder) DecodeBody(dst []codec.Event, body []byte) ([]codec.Event, error) {
	d.scratch = d.scratch[:0]
	body = bytes.TrimSpace(body)
	var err error
	if len(body) > 0 && body[0] == '[' {
		gjson.Parse(pool.B2S(body)).ForEach(func(_, v gjson.Result) bool {
			dst, err = d.decode(dst, codec.Raw(v))
			return err == nil && !d.ended
		})
	} else {
		dst, err = d.decode(dst, body)
	}
	if err != nil {
		return dst, err
	}
	if d.started && !d.ended && !d.finished {
		dst = d.finish(dst, codec.StopEndTurn)
	}
	return d.End(dst), nil
}

// End appends the end of the sequence when the upstream stream closed:
// EventEnd after a finishReason, else an EventError for the truncation.
// It appends nothing once the sequence has ended.
func (d *Decoder) End(dst []codec.Event) []codec.Event {
	if d.ended {
		return dst
	}
	d.ended = true
	if d.finished {
		return append(dst, codec.Event{Kind: codec.EventEnd})
	}
	return append(dst, codec.Event{Kind: codec.EventError,
		Err: codec.Error{Status: 502, Kind: codec.ErrAPI, Message: msgTruncated}})
}

// respFields holds the raw members of one GenerateContentResponse.
type respFields struct {
	candidates, usage, model, id, err, feedback []byte
}

func (rf *respFields) set(key, v []byte) {
	switch string(key) {
	case "candidates":
		rf.candidates = v
	case "usageMetadata", "usage_metadata":
		rf.usage = v
	case "modelVersion", "model_version":
		rf.model = v
	case "responseId", "response_id":
		rf.id = v
	case "error":
		rf.err = v
	case "promptFeedback", "prompt_feedback":
		rf.feedback = v
	}
}

// decode appends the Events of one response object.
func (d *Decoder) decode(dst []codec.Event, data []byte) ([]codec.Event, error) {
	if d.ended {
		return dst, nil
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return dst, nil
	}
	s := pool.B2S(data)
	if data[0] != '{' || !gjson.Valid(s) {
		return dst, ErrMalformedEvent
	}
	var rf respFields
	m := codec.ObjectMembers(data)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		rf.set(k, v)
	}
	if rf.err != nil {
		return d.fail(dst, rf.err), nil
	}
	if rf.usage != nil {
		d.usage = readUsage(rf.usage)
	}
	if !d.started {
		dst = d.start(dst, &rf)
	}
	if d.finished {
		if rf.usage != nil {
			dst = append(dst, codec.Event{Kind: codec.EventUsage, Usage: d.usage})
		}
		return dst, nil
	}
	return d.candidate(dst, &rf), nil
}

// start appends EventStart with the response id, model and prompt usage.
func (d *Decoder) start(dst []codec.Event, rf *respFields) []codec.Event {
	d.started = true
	id := codec.StrContent(rf.id)
	d.id = appendIDChars(d.id[:0], id)
	ev := codec.Event{Kind: codec.EventStart, ID: id, Name: codec.StrContent(rf.model)}
	if d.usage.Known {
		ev.Usage = codec.Usage{Input: d.usage.Input, CacheRead: d.usage.CacheRead, Known: true}
	}
	return append(dst, ev)
}

// candidate appends the Events of candidate 0 and its finishReason.
func (d *Decoder) candidate(dst []codec.Event, rf *respFields) []codec.Event {
	a := codec.ArrayElems(rf.candidates)
	cand, _ := a.Next()
	parts := codec.ArrayElems(member(member(cand, "content", "content"), "parts", "parts"))
	for p, ok := parts.Next(); ok; p, ok = parts.Next() {
		dst = d.part(dst, p)
	}
	reason := codec.StrContent(member(cand, "finishReason", "finish_reason"))
	switch {
	case len(reason) > 0 && string(reason) != "FINISH_REASON_UNSPECIFIED":
		dst = d.finish(dst, stopReason(reason, d.calls))
	case rf.candidates == nil && member(rf.feedback, "blockReason", "block_reason") != nil:
		dst = d.finish(dst, codec.StopRefusal)
	}
	return dst
}

// part appends the Events of one output part.
func (d *Decoder) part(dst []codec.Event, p []byte) []codec.Event {
	var pf partFields
	pf.read(p)
	switch {
	case pf.call != nil:
		if len(pf.sig) > 0 {
			dst = d.openBlock(dst, blockThinking)
			dst = append(dst, codec.Event{Kind: codec.EventSignature, Block: d.block, Text: pf.sig})
		}
		return d.toolCall(d.closeBlock(dst), pf.call)
	case pf.thought:
		dst = d.ensure(dst, blockThinking)
		if t := codec.StrContent(pf.text); len(t) > 0 {
			dst = append(dst, codec.Event{Kind: codec.EventThinking, Block: d.block, Text: t})
		}
		if len(pf.sig) > 0 {
			dst = append(dst, codec.Event{Kind: codec.EventSignature, Block: d.block, Text: pf.sig})
		}
		return dst
	}
	// A signature on a text part before any answer text rides in a
	// thinking block of its own. Once answer text has been relayed it is
	// dropped: emitting it would put a thinking block after the answer,
	// which splits it for clients that read the last text block (Claude
	// Code), and Gemini validates signatures only on functionCall parts.
	if len(pf.sig) > 0 && d.texts == 0 {
		dst = d.ensure(dst, blockThinking)
		dst = append(dst, codec.Event{Kind: codec.EventSignature, Block: d.block, Text: pf.sig})
		dst = d.closeBlock(dst)
	}
	if t := codec.StrContent(pf.text); len(t) > 0 {
		dst = d.ensure(dst, blockText)
		dst = append(dst, codec.Event{Kind: codec.EventText, Block: d.block, Text: t})
		d.texts++
	}
	return dst
}

// toolCall appends the start, whole arguments and stop of one call.
func (d *Decoder) toolCall(dst []codec.Event, fc []byte) []codec.Event {
	var id, name, args []byte
	m := codec.ObjectMembers(fc)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "id":
			id = codec.StrContent(v)
		case "name":
			name = codec.StrContent(v)
		case "args":
			if codec.IsObject(v) {
				args = v
			}
		}
	}
	if len(name) == 0 {
		return dst // no client can run a call without a name
	}
	if len(id) == 0 {
		id = d.mintID()
	}
	start := len(d.scratch)
	if args == nil {
		d.scratch = append(d.scratch, "{}"...)
	} else {
		d.scratch = appendEscapedCompact(d.scratch, args)
	}
	escArgs := d.scratch[start:]
	d.calls++
	dst = d.openBlock(dst, blockTool)
	b := d.block
	d.open = blockNone
	return append(dst,
		codec.Event{Kind: codec.EventToolCall, Block: b, ID: id, Name: name},
		codec.Event{Kind: codec.EventToolArgs, Block: b, Text: escArgs},
		codec.Event{Kind: codec.EventBlockStop, Block: b})
}

// mintID appends call_<responseId>_<n> (or call_<n>) to the scratch buffer.
func (d *Decoder) mintID() []byte {
	start := len(d.scratch)
	d.scratch = append(d.scratch, "call_"...)
	if len(d.id) > 0 {
		d.scratch = append(d.scratch, d.id...)
		d.scratch = append(d.scratch, '_')
	}
	d.scratch = codec.AppendInt(d.scratch, int64(d.calls))
	return d.scratch[start:len(d.scratch):len(d.scratch)]
}

// appendIDChars appends s with every byte outside [A-Za-z0-9_-] replaced
// by '_', so minted ids are valid everywhere (Anthropic's pattern).
func appendIDChars(dst, s []byte) []byte {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

// ensure keeps the open block when it has kind, else opens one.
func (d *Decoder) ensure(dst []codec.Event, kind blockKind) []codec.Event {
	if d.open == kind {
		return dst
	}
	return d.openBlock(dst, kind)
}

// openBlock closes the open block and opens a new one of kind.
func (d *Decoder) openBlock(dst []codec.Event, kind blockKind) []codec.Event {
	dst = d.closeBlock(dst)
	d.open, d.block = kind, d.blocks
	d.blocks++
	return dst
}

func (d *Decoder) closeBlock(dst []codec.Event) []codec.Event {
	if d.open == blockNone {
		return dst
	}
	d.open = blockNone
	return append(dst, codec.Event{Kind: codec.EventBlockStop, Block: d.block})
}

// finish closes the open block and appends EventFinish.
func (d *Decoder) finish(dst []codec.Event, stop codec.StopReason) []codec.Event {
	dst = d.closeBlock(dst)
	d.finished = true
	return append(dst, codec.Event{Kind: codec.EventFinish, Stop: stop, Usage: d.usage})
}

// fail appends the EventError for an in-band error object.
func (d *Decoder) fail(dst []codec.Event, e []byte) []codec.Event {
	d.ended = true
	status := int(codec.IntValue(member(e, "code", "code")))
	if status < 400 || status > 599 {
		status = statusForName(codec.StrContent(member(e, "status", "status")))
	}
	msg := codec.StrContent(member(e, "message", "message"))
	if msg == nil {
		msg = codec.NoMessage
	}
	return append(dst, codec.Event{Kind: codec.EventError,
		Err: codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: msg}})
}

// statusForName returns the HTTP status of a Google error status string.
func statusForName(s []byte) int {
	switch string(s) {
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return 400
	case "UNAUTHENTICATED":
		return 401
	case "PERMISSION_DENIED":
		return 403
	case "NOT_FOUND":
		return 404
	case "RESOURCE_EXHAUSTED":
		return 429
	case "UNAVAILABLE":
		return 503
	case "DEADLINE_EXCEEDED":
		return 504
	case "UNIMPLEMENTED":
		return 501
	}
	return 500
}

// stopReason maps a finishReason (docs/TRANSLATION.md, stop reasons). A turn that called
// functions ends with STOP: calls > 0 makes it tool_use. The function-call
// failures (MALFORMED_FUNCTION_CALL ...) and OTHER/LANGUAGE end the turn.
func stopReason(reason []byte, calls int) codec.StopReason {
	switch string(reason) {
	case "MAX_TOKENS":
		return codec.StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return codec.StopRefusal
	}
	if calls > 0 {
		return codec.StopToolUse
	}
	return codec.StopEndTurn
}

// readUsage maps usageMetadata to neutral usage (docs/TRANSLATION.md, usage).
func readUsage(v []byte) codec.Usage {
	var prompt, toolPrompt, cached, cand, thoughts int64
	m := codec.ObjectMembers(v)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "promptTokenCount", "prompt_token_count":
			prompt = codec.IntValue(v)
		case "toolUsePromptTokenCount", "tool_use_prompt_token_count":
			toolPrompt = codec.IntValue(v)
		case "cachedContentTokenCount", "cached_content_token_count":
			cached = codec.IntValue(v)
		case "candidatesTokenCount", "candidates_token_count":
			cand = codec.IntValue(v)
		case "thoughtsTokenCount", "thoughts_token_count":
			thoughts = codec.IntValue(v)
		}
	}
	prompt, toolPrompt, cached = max(prompt, 0), max(toolPrompt, 0), max(cached, 0)
	cand, thoughts = max(cand, 0), max(thoughts, 0)
	return codec.Usage{Input: prompt + toolPrompt, CacheRead: cached, Output: cand + thoughts,
		Reasoning: thoughts, Known: true}
}
