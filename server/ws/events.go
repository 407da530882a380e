package ws

import (
	"math/rand/v2"
	"strconv"

	"slipstream/codec"
)

// appendWrappedError appends the WebSocket error event Codex acts on:
// {"type":"error","status":N,"error":{...},"headers":{...}}. errObj is a
// raw JSON object (the OpenAI error object); retryAfter, when set, is the
// retry-after header value. Codex ignores an error event without status,
// so there always is one.
func appendWrappedError(dst []byte, status int, errObj, retryAfter []byte) []byte {
	dst = append(dst, `{"type":"error","status":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `,"error":`...)
	dst = append(dst, errObj...)
	if len(retryAfter) > 0 && headerText(retryAfter) {
		dst = append(dst, `,"headers":{"retry-after":`...)
		dst = codec.AppendQuoted(dst, retryAfter)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendErrorObject appends an OpenAI error object; msg is plain text.
func appendErrorObject(dst []byte, typ, code, msg string) []byte {
	dst = append(dst, `{"type":`...)
	dst = codec.AppendQuotedString(dst, typ)
	dst = append(dst, `,"code":`...)
	dst = codec.AppendQuotedString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = codec.AppendQuotedString(dst, msg)
	return append(dst, `,"param":null}`...)
}

// statusForCode is the status a Responses stream error event with this
// code gets when it becomes a wrapped error: what the same failure would
// have answered over HTTP, so that Codex reacts to it the same way.
func statusForCode(code []byte) int {
	switch string(code) {
	case "rate_limit_exceeded", "insufficient_quota", "usage_limit_reached":
		return 429
	case "context_length_exceeded", "invalid_request_error", "invalid_prompt":
		return 400
	case "previous_response_not_found":
		return 400
	}
	return 500
}

// newResponseID returns a fresh id for a locally answered response.
func appendResponseID(dst []byte) []byte {
	dst = append(dst, "resp_ws"...)
	dst = strconv.AppendUint(dst, rand.Uint64(), 36)
	return strconv.AppendUint(dst, rand.Uint64(), 36)
}

// appendPrewarm appends the created or completed event of a prewarm
// (generate:false): an empty response with the given id, answered without
// calling any upstream. model is the frame's raw model value (a valid
// JSON string, or null).
func appendPrewarm(dst []byte, completed bool, id, model []byte, created int64) []byte {
	typ, status, seq := "response.created", "in_progress", "0"
	if completed {
		typ, status, seq = "response.completed", "completed", "1"
	}
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","sequence_number":`...)
	dst = append(dst, seq...)
	dst = append(dst, `,"response":{"id":"`...)
	dst = append(dst, id...)
	dst = append(dst, `","object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, created, 10)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","model":`...)
	dst = append(dst, model...)
	dst = append(dst, `,"output":[],"usage":`...)
	if completed {
		dst = append(dst, `{"input_tokens":0,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}}}`...)
	} else {
		dst = append(dst, `null}}`...)
	}
	return dst
}

// appendTurnState appends the response.metadata event that carries an
// upstream's x-codex-turn-state response header to the client.
func appendTurnState(dst, state []byte) []byte {
	dst = append(dst, `{"type":"response.metadata","headers":{"x-codex-turn-state":`...)
	dst = codec.AppendQuoted(dst, state)
	return append(dst, `}}`...)
}

// headerText reports whether v may be sent as a header value: no control
// bytes, so that client or upstream bytes cannot split or forge a header.
func headerText(v []byte) bool {
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
