package translate

import (
	"bytes"
	"io"
	"slices"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/pool"
)

// Google accounts are served by the Code Assist API, which speaks Gemini
// inside an envelope: the request is {model, project, request}, and every
// answer (each stream event) is {"response": <Gemini response>, ...}.
// The request is wrapped once and the answers unwrapped as they pass, so
// clients see plain Gemini.

// AppendCodeAssistRequest appends the Code Assist envelope of the Gemini
// request body req: model (escaped string content) and project name the
// upstream model and the account's project.
func AppendCodeAssistRequest(dst, model []byte, project string, req []byte) []byte {
	dst = append(dst, `{"model":`...)
	dst = codec.AppendQuoted(dst, model)
	dst = append(dst, `,"project":`...)
	dst = codec.AppendQuotedString(dst, project)
	dst = append(dst, `,"request":`...)
	dst = append(dst, bytes.TrimSpace(req)...)
	return append(dst, '}')
}

// CodeAssistResponse returns the "response" member of a whole Code
// Assist answer body when it is an object (the plain Gemini answer),
// else nil. The result is a new slice.
func CodeAssistResponse(body []byte) []byte {
	if r := gjson.Get(pool.B2S(body), "response"); r.Exists() && r.IsObject() {
		return []byte(r.Raw)
	}
	return nil
}

// codeAssistRead is how much room CodeAssistReader makes for a read of
// its source (it reads into the spare room of its carry buffer while at
// least half that is left).
const codeAssistRead = 8192

// CodeAssistReader rewrites a Code Assist event stream as it is read:
// each event whose data is {"response": X, ...} (X an object) becomes one
// event "data: X"; anything else passes as it is. A last event without
// its blank line passes as it is when the source ends. The zero value
// needs Reset before use; Reset keeps the buffers.
type CodeAssistReader struct {
	src     io.Reader
	in, out []byte
	data    []byte // the current event's data (reused)
	off     int
	err     error
}

// Reset makes r read from src.
func (r *CodeAssistReader) Reset(src io.Reader) {
	r.src, r.in, r.out, r.off, r.err = src, r.in[:0], r.out[:0], 0, nil
}

// Read implements io.Reader.
func (r *CodeAssistReader) Read(b []byte) (int, error) {
	for r.off == len(r.out) {
		r.out, r.off = r.out[:0], 0
		if r.next() {
			continue
		}
		if r.err != nil {
			if len(r.in) > 0 { // a last event without its blank line
				r.out, r.in = append(r.out, r.in...), r.in[:0]
				continue
			}
			return 0, r.err
		}
		if cap(r.in)-len(r.in) < codeAssistRead/2 {
			r.in = slices.Grow(r.in, codeAssistRead)
		}
		n, err := r.src.Read(r.in[len(r.in):cap(r.in)])
		r.in = r.in[:len(r.in)+n]
		r.err = err
	}
	n := copy(b, r.out[r.off:])
	r.off += n
	return n, nil
}

// next moves one complete event from in to out (unwrapped); false when
// in holds none yet.
func (r *CodeAssistReader) next() bool {
	ev, rest, ok := sse.NextEvent(r.in)
	if !ok {
		return false
	}
	r.data = sse.AppendRawData(r.data[:0], ev)
	if inner := codec.Member(r.data, "response"); codec.IsObject(inner) {
		r.out = append(r.out, "data: "...)
		r.out = append(r.out, inner...)
		r.out = append(r.out, '\n', '\n')
	} else {
		r.out = append(r.out, r.in[:len(r.in)-len(rest)]...)
	}
	r.in = r.in[:copy(r.in, rest)]
	return true
}
