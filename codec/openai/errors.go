// Package openai reads and writes the two OpenAI dialects: Chat
// Completions (chat_*.go, https://platform.openai.com/docs/api-reference/chat) and Responses
// (responses_*.go, https://platform.openai.com/docs/api-reference/responses). Both share the error shape in this file.
package openai

import (
	"slipstream/codec"
)

var errorTypes = [...]string{
	codec.ErrInvalidRequest: "invalid_request_error",
	codec.ErrAuthentication: "invalid_request_error",
	codec.ErrPermission:     "permission_error",
	codec.ErrNotFound:       "invalid_request_error",
	codec.ErrTooLarge:       "invalid_request_error",
	codec.ErrRateLimit:      "rate_limit_exceeded",
	codec.ErrAPI:            "server_error",
	codec.ErrOverloaded:     "server_error",
	codec.ErrTimeout:        "timeout",
	codec.ErrNotImplemented: "invalid_request_error",
	codec.ErrContextLength:  "invalid_request_error",
}

var errorCodes = [...]string{
	codec.ErrAuthentication: "invalid_api_key",
	codec.ErrNotFound:       "model_not_found",
	codec.ErrRateLimit:      "rate_limit_exceeded",
	codec.ErrContextLength:  "context_length_exceeded",
	codec.ErrNotImplemented: "not_implemented",
	codec.ErrTooLarge:       "request_too_large",
	codec.ErrTimeout:        "timeout",
	codec.ErrOverloaded:     "",
	codec.ErrAPI:            "",
}

// ErrorType returns the OpenAI error.type for a kind.
func ErrorType(k codec.ErrorKind) string {
	if int(k) < len(errorTypes) {
		return errorTypes[k]
	}
	return "server_error"
}

// AppendErrorObject appends {"error":{"message":…,"type":…,"param":null,"code":…}},
// the body of an HTTP error and the payload of Chat's in-band error.
func AppendErrorObject(dst []byte, e *codec.Error) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = codec.AppendString(dst, e.Message)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, ErrorType(e.Kind)...)
	dst = append(dst, `","param":null,"code":`...)
	return append(appendCode(dst, e), `}}`...)
}

// appendCode appends the error code as a JSON string, or null.
func appendCode(dst []byte, e *codec.Error) []byte {
	if len(e.Code) > 0 {
		return codec.AppendString(dst, e.Code)
	}
	if int(e.Kind) < len(errorCodes) && errorCodes[e.Kind] != "" {
		return codec.AppendQuotedString(dst, errorCodes[e.Kind])
	}
	return append(dst, "null"...)
}

// AppendCode appends the error's code as a JSON string (never null: the
// Responses response.failed event needs one; "server_error" by default).
func AppendCode(dst []byte, e *codec.Error) []byte {
	if len(e.Code) > 0 {
		return codec.AppendString(dst, e.Code)
	}
	if int(e.Kind) < len(errorCodes) && errorCodes[e.Kind] != "" {
		return codec.AppendQuotedString(dst, errorCodes[e.Kind])
	}
	return codec.AppendQuotedString(dst, ErrorType(e.Kind))
}

// DecodeError reads an OpenAI error body into a neutral Error with the given
// HTTP status. Byte fields are views into body.
func DecodeError(body []byte, status int) codec.Error {
	e := codec.Error{Status: status, Kind: codec.KindForStatus(status)}
	e.Message = codec.Content(codec.Get(body, "error.message"))
	e.Code = codec.Content(codec.Get(body, "error.code"))
	if string(e.Code) == "context_length_exceeded" || status == 400 && codec.IsContextLengthMessage(e.Message) {
		e.Kind = codec.ErrContextLength
	}
	if e.Message == nil {
		e.Message = codec.NoMessage
	}
	return e
}
