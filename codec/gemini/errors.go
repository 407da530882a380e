// Package gemini reads and writes the Google Gemini generateContent dialect
// (https://ai.google.dev/api/generate-content).
package gemini

import (
	"slipstream/codec"
)

var errorStatuses = [...]string{
	codec.ErrInvalidRequest: "INVALID_ARGUMENT",
	codec.ErrAuthentication: "UNAUTHENTICATED",
	codec.ErrPermission:     "PERMISSION_DENIED",
	codec.ErrNotFound:       "NOT_FOUND",
	codec.ErrTooLarge:       "INVALID_ARGUMENT",
	codec.ErrRateLimit:      "RESOURCE_EXHAUSTED",
	codec.ErrAPI:            "INTERNAL",
	codec.ErrOverloaded:     "UNAVAILABLE",
	codec.ErrTimeout:        "DEADLINE_EXCEEDED",
	codec.ErrNotImplemented: "UNIMPLEMENTED",
	codec.ErrContextLength:  "INVALID_ARGUMENT",
}

// ErrorStatus returns Google's error.status string for a kind.
func ErrorStatus(k codec.ErrorKind) string {
	if int(k) < len(errorStatuses) {
		return errorStatuses[k]
	}
	return "INTERNAL"
}

// AppendErrorObject appends {"error":{"code":N,"message":…,"status":…}},
// the body of an HTTP error and the payload of an in-band stream error.
func AppendErrorObject(dst []byte, e *codec.Error) []byte {
	status := e.Status
	if status == 0 {
		status = codec.StatusForKind(e.Kind)
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = codec.AppendInt(dst, int64(status))
	dst = append(dst, `,"message":`...)
	dst = codec.AppendString(dst, e.Message)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, ErrorStatus(e.Kind)...)
	return append(dst, `"}}`...)
}

// DecodeError reads a Google error body into a neutral Error with the given
// HTTP status. Byte fields are views into body.
func DecodeError(body []byte, status int) codec.Error {
	e := codec.Error{Status: status, Kind: codec.KindForStatus(status)}
	e.Message = codec.Content(codec.Get(body, "error.message"))
	if status == 400 && codec.IsContextLengthMessage(e.Message) {
		e.Kind = codec.ErrContextLength
	}
	if e.Message == nil {
		e.Message = codec.NoMessage
	}
	return e
}
