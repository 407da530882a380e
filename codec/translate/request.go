package translate

import (
	"errors"
	"fmt"

	"slipstream/codec"
)

// ErrUnsupported is returned for a dialect that has no translator.
var ErrUnsupported = errors.New("dialect cannot be translated")

// DecodeRequest reads a client request of dialect d into r (r Reset by the
// caller). body must be valid JSON and must outlive r: r's fields are views
// into it. The error's message is fit for a 400 to the client.
func DecodeRequest(d codec.Dialect, r *codec.Request, body []byte) error {
	t := row(d)
	if t == nil || t.decodeRequest == nil {
		return fmt.Errorf("cannot read %s request: %w", d, ErrUnsupported)
	}
	return t.decodeRequest(r, body)
}

// AppendRequest writes r as an upstream request of dialect d to dst (model:
// escaped upstream model name, no quotes). An error means the target cannot
// express the request; its message is fit for a 400 to the client.
func AppendRequest(d codec.Dialect, dst []byte, r *codec.Request, model []byte) ([]byte, error) {
	t := row(d)
	if t == nil || t.appendRequest == nil {
		return dst, fmt.Errorf("cannot write %s request: %w", d, ErrUnsupported)
	}
	return t.appendRequest(dst, r, model)
}

// requestSlack is the fixed part of RequestSizeHint: the envelope a writer
// adds around messages (model, stream options, generation config).
const requestSlack = 4 << 10

// RequestSizeHint is the dst capacity to reserve for translating a body of
// n bytes so that the writer does not grow dst in the common case. A
// translated request is about its source size: text, schemas and tool
// arguments are copied verbatim, and only the per-message envelope changes
// (Chat and Responses wrap each tool call and result a little more than
// Anthropic does), so n/16 covers the growth for realistic sessions.
func RequestSizeHint(n int) int { return n + n/16 + requestSlack }

// DecodeError reads an upstream error body of dialect d (HTTP status
// status) into a neutral Error whose byte fields are views into body.
func DecodeError(d codec.Dialect, body []byte, status int) codec.Error {
	t := row(d)
	if t == nil || t.decodeError == nil {
		return codec.Error{Status: status, Kind: codec.KindForStatus(status), Message: codec.NoMessage}
	}
	return t.decodeError(body, status)
}

// AppendErrorObject appends e as dialect d's error body (the body of an
// HTTP error response). An untranslatable d gets the OpenAI shape, the one
// most clients understand.
func AppendErrorObject(d codec.Dialect, dst []byte, e *codec.Error) []byte {
	t := row(d)
	if t == nil || t.appendError == nil {
		return appendFallbackError(dst, e)
	}
	return t.appendError(dst, e)
}

// appendFallbackError writes {"error":{"message":…,"type":"api_error"}}
// for dialects whose package has not been wired.
func appendFallbackError(dst []byte, e *codec.Error) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = codec.AppendString(dst, e.Message)
	return append(dst, `,"type":"api_error"}}`...)
}

// CheckStream validates a whole client stream of dialect d with that
// dialect's grammar checker.
func CheckStream(d codec.Dialect, stream []byte) error {
	t := row(d)
	if t == nil || t.checkStream == nil {
		return fmt.Errorf("cannot check %s stream: %w", d, ErrUnsupported)
	}
	return t.checkStream(stream)
}
