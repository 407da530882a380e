package bench

import (
	"bytes"
	"net/http"
)

// Dialect is one of the four client/upstream API dialects.
type Dialect uint8

// The dialects: OpenAI Chat, OpenAI Responses, Anthropic, Gemini.
const (
	Chat        Dialect = iota // OpenAI Chat Completions
	Responses                  // OpenAI Responses
	Anthropic                  // Anthropic Messages
	Gemini                     // Google generateContent
	CountTokens                // Anthropic count_tokens (answered locally by slipstream)
)

// String returns the dialect's short name.
func (d Dialect) String() string {
	switch d {
	case Chat:
		return "chat"
	case Responses:
		return "responses"
	case Anthropic:
		return "messages"
	case Gemini:
		return "gemini"
	case CountTokens:
		return "count_tokens"
	}
	return "unknown"
}

// Path returns the client path for a request of dialect d; model is used
// only by Gemini, whose model lives in the path.
func (d Dialect) Path(model string, stream bool) string {
	switch d {
	case Chat:
		return "/v1/chat/completions"
	case Responses:
		return "/v1/responses"
	case Anthropic:
		return "/v1/messages"
	case CountTokens:
		return "/v1/messages/count_tokens"
	}
	if stream {
		return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// SetHeaders sets the headers a real client of dialect d sends (a dummy
// key in that client's header; slipstream runs without client keys on
// loopback, so the key only exercises header handling).
func (d Dialect) SetHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	switch d {
	case Anthropic, CountTokens:
		h.Set("X-Api-Key", "bench-key")
		h.Set("Anthropic-Version", "2023-06-01")
		h.Set("Anthropic-Beta", "interleaved-thinking-2025-05-14")
	case Gemini:
		h.Set("X-Goog-Api-Key", "bench-key")
	default:
		h.Set("Authorization", "Bearer bench-key")
	}
}

var (
	markChatDone      = []byte("data: [DONE]")
	markRespCompleted = []byte("event: response.completed")
	markMessageStop   = []byte("event: message_stop")
	markFinishReason  = []byte(`"finishReason"`)
	markStopReason    = []byte(`"stop_reason"`)
	markChatFinish    = []byte(`"finish_reason"`)
	markRespStatus    = []byte(`"status":"completed"`)
	markInputTokens   = []byte(`"input_tokens"`)
)

// Complete reports whether a 2xx response body of dialect d carries the
// dialect's terminal marker: [DONE], response.completed, message_stop, or
// a final Gemini event with finishReason for streams; the stop/finish
// field or completed status for single JSON bodies.
func (d Dialect) Complete(body []byte, stream bool) bool {
	if stream {
		return d.streamComplete(body)
	}
	switch d {
	case Chat:
		return bytes.Contains(body, markChatFinish)
	case Responses:
		return bytes.Contains(body, markRespStatus)
	case Anthropic:
		return bytes.Contains(body, markStopReason)
	case CountTokens:
		return bytes.Contains(body, markInputTokens)
	}
	return bytes.Contains(body, markFinishReason)
}

func (d Dialect) streamComplete(body []byte) bool {
	if !bytes.HasSuffix(body, eventEnd) && !bytes.HasSuffix(body, []byte("\r\n\r\n")) {
		return false // the last event was cut
	}
	body = bytes.TrimRight(body, "\r\n")
	last := body[bytes.LastIndexByte(body, '\n')+1:]
	switch d {
	case Chat:
		return bytes.Equal(last, markChatDone)
	case Responses:
		return bytes.Contains(body, markRespCompleted) && bytes.HasPrefix(last, []byte("data: {\"type\":\"response.completed\""))
	case Anthropic:
		return bytes.Contains(body, markMessageStop) && bytes.HasPrefix(last, []byte("data: {\"type\":\"message_stop\""))
	}
	return bytes.HasPrefix(last, []byte("data: ")) && bytes.Contains(last, markFinishReason)
}

// IsDialectError reports whether body is an error in dialect d's shape:
// Anthropic {"type":"error",...}, OpenAI {"error":{...}}, Google
// {"error":{"code":...}}.
func (d Dialect) IsDialectError(body []byte) bool {
	body = bytes.TrimSpace(body)
	switch d {
	case Anthropic, CountTokens:
		return bytes.HasPrefix(body, []byte(`{"type":"error"`)) || bytes.Contains(body, []byte(`"type":"error","error":{`))
	case Gemini:
		return bytes.HasPrefix(body, []byte(`{"error":{`)) && bytes.Contains(body, []byte(`"code":`))
	}
	return bytes.HasPrefix(body, []byte(`{"error":{`))
}
