package openai

import (
	"bytes"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// ChatTail watches a Chat Completions stream that is relayed verbatim (the
// same-dialect path) for its terminal [DONE] or an in-band error, and reads
// the usage chunk (sent when the client asked stream_options.include_usage).
// Until usage is seen it keeps a view of each chunk's text delta, so that
// the caller can count the output locally when none comes.
type ChatTail struct {
	done  bool
	usage codec.Usage
	text  []byte
}

// Reset prepares t for a new stream.
func (t *ChatTail) Reset() { t.done, t.usage, t.text = false, codec.Usage{}, nil }

// Observe notes one relayed event.
func (t *ChatTail) Observe(_, data []byte) {
	t.text = nil
	if string(data) == "[DONE]" || bytes.HasPrefix(data, []byte(`{"error"`)) {
		t.done = true
		return
	}
	if bytes.Contains(data, usageKey) {
		if u := chatUsage(codec.ResultOf(codec.Member(data, "usage"))); u.Known {
			t.usage = u
		}
	}
	if !t.usage.Known {
		t.text = deltaContent(data)
	}
}

// deltaContent returns the escaped content of choices[0].delta.content in
// a chunk, or nil.
func deltaContent(chunk []byte) []byte {
	choices := codec.ArrayElems(codec.Member(chunk, "choices"))
	first, _ := choices.Next()
	return codec.StrContent(codec.Member(codec.Member(first, "delta"), "content"))
}

var usageKey = []byte(`"usage"`)

// Done reports whether the stream has ended properly.
func (t *ChatTail) Done() bool { return t.done }

// Usage returns the usage the stream reported (Known false if none yet).
func (t *ChatTail) Usage() codec.Usage { return t.usage }

// Text returns the escaped text delta of the last observed chunk while no
// usage is known, else nil. It is a view into that chunk, valid until the
// next Observe.
func (t *ChatTail) Text() []byte { return t.text }

// ReadChatUsage reads a Chat usage object (the "usage" member of a
// chat.completion) into the neutral Usage.
func ReadChatUsage(obj []byte) codec.Usage { return chatUsage(codec.ResultOf(obj)) }

// AppendError appends Chat's in-band error: a data event holding the error
// object, and no [DONE] after it.
func (t *ChatTail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	dst = sse.AppendEventStart(dst, "")
	dst = AppendErrorObject(dst, e)
	return sse.AppendEventEnd(dst)
}

// ResponsesTail watches a Responses stream that is relayed verbatim. It
// keeps the last sequence_number, the response id, creation time and
// model so that its in-band error continues the stream: numbered after
// the last event, and, when the stream failed before its response.created,
// preceded by one (a Responses stream starts with it; the SDKs expect it).
type ResponsesTail struct {
	done     bool
	started  bool // a response.created passed
	seq      int64
	idBuf    [128]byte
	id       []byte
	created  int64
	modelBuf [128]byte
	model    []byte
	usage    codec.Usage
}

// Reset prepares t for a new stream.
func (t *ResponsesTail) Reset() {
	t.done, t.started, t.seq, t.id, t.usage = false, false, -1, nil, codec.Usage{}
	t.created, t.model = 0, nil
}

// Begin sets what a response.created that t writes itself carries: the
// client-facing model (escaped string content; copied, at most 128 bytes
// kept) and the creation time. Call it after Reset.
func (t *ResponsesTail) Begin(model []byte, created int64) {
	t.model = t.modelBuf[:copy(t.modelBuf[:], model)]
	t.created = created
}

// Observe notes one relayed event; the terminal event's response carries
// the usage. It walks the event's top-level members (a raw view, no gjson
// scan per event) and stops once it has what it reads: the
// sequence_number, and the response of a created or terminal event.
func (t *ResponsesTail) Observe(name, data []byte) {
	terminal, created := false, false
	switch string(name) {
	case "response.completed", "response.incomplete", "response.failed":
		t.done, terminal = true, true
	case "response.created":
		t.started, created = true, true
	}
	wantResp := terminal || created
	var resp, seq []byte
	m := codec.ObjectMembers(data)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "sequence_number":
			if seq == nil {
				seq = v
			}
		case "response":
			if resp == nil {
				resp = v
			}
		}
		if seq != nil && (resp != nil || !wantResp) {
			break
		}
	}
	if seq != nil {
		t.seq = codec.IntValue(seq)
	}
	if resp == nil {
		return
	}
	if terminal {
		t.usage = responsesUsage(codec.Member(resp, "usage"))
	} else {
		t.noteCreated(resp)
	}
}

// noteCreated keeps the id, creation time and model of the response a
// response.created event carries.
func (t *ResponsesTail) noteCreated(resp []byte) {
	m := codec.ObjectMembers(resp)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "id":
			if id := codec.StrContent(v); len(id) <= len(t.idBuf) {
				t.id = t.idBuf[:copy(t.idBuf[:], id)]
			}
		case "created_at":
			t.created = codec.IntValue(v)
		case "model":
			if mo := codec.StrContent(v); len(mo) > 0 && len(mo) <= len(t.modelBuf) {
				t.model = t.modelBuf[:copy(t.modelBuf[:], mo)]
			}
		}
	}
}

// Done reports whether a terminal event passed.
func (t *ResponsesTail) Done() bool { return t.done }

// Usage returns the usage of the terminal event (Known false before it).
func (t *ResponsesTail) Usage() codec.Usage { return t.usage }

// Text returns nothing: a Responses stream reports usage in its terminal
// event, so its text is not counted locally.
func (t *ResponsesTail) Text() []byte { return nil }

// ReadResponsesUsage reads a Responses usage object (the "usage" member of
// a response) into the neutral Usage.
func ReadResponsesUsage(obj []byte) codec.Usage { return responsesUsage(obj) }

// AppendError appends a response.failed event carrying e, numbered after
// the last relayed event, and before it a response.created when none
// passed.
func (t *ResponsesTail) AppendError(dst []byte, e *codec.Error) []byte {
	t.done = true
	if len(t.id) == 0 {
		t.id = append(t.idBuf[:0], "resp_failed"...)
	}
	if !t.started {
		t.started = true
		t.seq++
		dst = sse.AppendEventStart(dst, "response.created")
		dst = append(dst, `{"type":"response.created","sequence_number":`...)
		dst = codec.AppendInt(dst, t.seq)
		dst = t.appendResponse(dst, "in_progress")
		dst = append(dst, `,"output":[],"usage":null}}`...)
		dst = sse.AppendEventEnd(dst)
	}
	dst = sse.AppendEventStart(dst, "response.failed")
	dst = append(dst, `{"type":"response.failed","sequence_number":`...)
	dst = codec.AppendInt(dst, t.seq+1)
	dst = t.appendResponse(dst, "failed")
	dst = append(dst, `,"error":{"code":`...)
	dst = AppendCode(dst, e)
	dst = append(dst, `,"message":`...)
	dst = codec.AppendString(dst, e.Message)
	dst = append(dst, `},"output":[],"usage":null}}`...)
	return sse.AppendEventEnd(dst)
}

// appendResponse opens the response object of t's events, up to its
// status.
func (t *ResponsesTail) appendResponse(dst []byte, status string) []byte {
	dst = append(dst, `,"response":{"id":`...)
	dst = codec.AppendString(dst, t.id)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = codec.AppendInt(dst, t.created)
	dst = append(dst, `,"model":`...)
	dst = codec.AppendString(dst, t.model)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	return append(dst, '"')
}
