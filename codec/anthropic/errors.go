// Package anthropic reads and writes the Anthropic Messages dialect
// (https://docs.anthropic.com/en/api/messages).
package anthropic

import (
	"slipstream/codec"
)

var errorTypes = [...]string{
	codec.ErrInvalidRequest: "invalid_request_error",
	codec.ErrAuthentication: "authentication_error",
	codec.ErrPermission:     "permission_error",
	codec.ErrNotFound:       "not_found_error",
	codec.ErrTooLarge:       "request_too_large",
	codec.ErrRateLimit:      "rate_limit_error",
	codec.ErrAPI:            "api_error",
	codec.ErrOverloaded:     "overloaded_error",
	codec.ErrTimeout:        "timeout_error",
	codec.ErrNotImplemented: "api_error",
	codec.ErrContextLength:  "invalid_request_error",
}

// ErrorType returns the Anthropic error.type for a kind.
func ErrorType(k codec.ErrorKind) string {
	if int(k) < len(errorTypes) {
		return errorTypes[k]
	}
	return "api_error"
}

// AppendErrorObject appends {"type":"error","error":{"type":…,"message":…}},
// the body of an HTTP error and the data of an in-band error event.
func AppendErrorObject(dst []byte, e *codec.Error) []byte {
	dst = append(dst, `{"type":"error","error":{"type":"`...)
	dst = append(dst, ErrorType(e.Kind)...)
	dst = append(dst, `","message":`...)
	if e.Kind == codec.ErrContextLength {
		dst = appendContextMessage(dst, e.Message)
	} else {
		dst = codec.AppendString(dst, e.Message)
	}
	return append(dst, `}}`...)
}

// appendContextMessage writes a context-length error in the wording Claude
// Code reacts to (it compacts the conversation on "prompt is too long:
// N tokens > M maximum"), keeping the numbers of another provider's
// message when it has them.
func appendContextMessage(dst, msg []byte) []byte {
	if len(msg) >= 18 && string(msg[:18]) == "prompt is too long" {
		return codec.AppendString(dst, msg)
	}
	dst = append(dst, `"prompt is too long`...)
	if prompt, limit, ok := codec.ContextNumbers(msg); ok {
		dst = append(dst, ": "...)
		dst = codec.AppendInt(dst, prompt)
		dst = append(dst, " tokens > "...)
		dst = codec.AppendInt(dst, limit)
		dst = append(dst, " maximum"...)
	}
	dst = append(dst, " ("...)
	dst = append(dst, msg...)
	return append(dst, `)"`...)
}

// DecodeError reads an Anthropic error body into a neutral Error with the
// given HTTP status. Byte fields are views into body.
func DecodeError(body []byte, status int) codec.Error {
	e := codec.Error{Status: status, Kind: codec.KindForStatus(status)}
	e.Message = codec.Content(codec.Get(body, "error.message"))
	switch codec.Get(body, "error.type").Str {
	case "overloaded_error":
		e.Kind = codec.ErrOverloaded
	case "rate_limit_error":
		e.Kind = codec.ErrRateLimit
	case "request_too_large":
		e.Kind = codec.ErrTooLarge
	case "invalid_request_error":
		if codec.IsContextLengthMessage(e.Message) {
			e.Kind = codec.ErrContextLength
		}
	}
	if e.Message == nil {
		e.Message = codec.NoMessage
	}
	return e
}
