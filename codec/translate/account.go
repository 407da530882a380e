package translate

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/pool"
)

// Subscription accounts answer some failures with status 200 and an
// error event as the stream's first event, and some backends only
// stream. The readers below find those error events and aggregate a
// Responses stream into its body. They run once per account answer, off
// the per-event path, and read with gjson.

// StreamError returns the JSON data of ev, one raw SSE event (sse.FirstEvent),
// when it is an error: an `error` event (Anthropic), or data of type
// "error" or "response.failed" (Responses); else nil. An error event
// without data gives `{}`. The result is a view into ev or a new slice.
func StreamError(ev []byte) []byte {
	var name, data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if v, ok := bytes.CutPrefix(line, []byte("event:")); ok {
			name = bytes.TrimSpace(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = bytes.TrimSpace(v)
		}
	}
	typ := gjson.Get(pool.B2S(data), "type").String()
	if string(name) == "error" || typ == "error" || typ == "response.failed" {
		if len(data) == 0 {
			data = []byte(`{}`)
		}
		return data
	}
	return nil
}

// Statuses ErrorSignal maps an error event to.
const (
	statusTooMany     = 429
	statusBadGateway  = 502
	statusUnavailable = 503
)

// ErrorSignal turns an in-stream error event's data (StreamError) into
// an error body the account quota readers understand
// ({"error":{type, message, resets_at, resets_in_seconds}}) and the
// status it stands for: 429 for a usage or rate limit, 503 for an
// overload, 502 otherwise. The body is a new slice.
func ErrorSignal(data []byte) ([]byte, int) {
	get := func(paths ...string) gjson.Result {
		for _, p := range paths {
			if r := gjson.Get(pool.B2S(data), p); r.Exists() && r.String() != "" {
				return r
			}
		}
		return gjson.Result{}
	}
	code := get("error.type", "error.code", "code", "response.error.code", "response.error.type").String()
	msg := get("error.message", "message", "response.error.message").String()
	b := append([]byte(`{"error":{"type":`), codec.AppendQuotedString(nil, code)...)
	b = append(b, `,"message":`...)
	b = append(b, codec.AppendQuotedString(nil, msg)...)
	if r := get("error.resets_at", "resets_at", "response.error.resets_at"); r.Exists() {
		b = append(b, `,"resets_at":`...)
		b = strconv.AppendInt(b, r.Int(), 10)
	}
	if r := get("error.resets_in_seconds", "resets_in_seconds", "response.error.resets_in_seconds"); r.Exists() {
		b = append(b, `,"resets_in_seconds":`...)
		b = strconv.AppendInt(b, r.Int(), 10)
	}
	b = append(b, "}}"...)
	status := statusBadGateway
	switch code {
	case "usage_limit_reached", "rate_limit_exceeded", "rate_limit_error", "insufficient_quota":
		status = statusTooMany
	case "overloaded_error", "server_is_overloaded":
		status = statusUnavailable
	}
	return b, status
}

// AggregateResponses makes a whole Responses event stream one response
// body: the final response object of response.completed (or
// response.incomplete), its output filled from the
// response.output_item.done events when the backend left it empty. When
// the stream holds an error event first, it returns that event's data as
// errData instead (StreamError); a stream without a final response gives
// a server_error event's data. body is a view into raw or a new slice.
func AggregateResponses(raw []byte) (body, errData []byte) {
	var final []byte
	var items [][]byte
	for len(raw) > 0 {
		ev, ok := sse.FirstEvent(raw)
		if !ok {
			break
		}
		raw = raw[bytes.Index(raw, ev)+len(ev):]
		if data := StreamError(ev); data != nil {
			return nil, data
		}
		data := sse.AppendRawData(nil, ev)
		switch gjson.Get(pool.B2S(data), "type").String() {
		case "response.output_item.done":
			items = append(items, []byte(gjson.Get(pool.B2S(data), "item").Raw))
		case "response.completed", "response.incomplete":
			final = []byte(gjson.Get(pool.B2S(data), "response").Raw)
		}
	}
	if len(final) == 0 {
		return nil, []byte(`{"type":"error","error":{"type":"server_error","message":"the account's stream ended without its final response"}}`)
	}
	if out := gjson.Get(pool.B2S(final), "output"); len(items) > 0 && (!out.Exists() || len(out.Array()) == 0) {
		arr := append([]byte{'['}, bytes.Join(items, []byte{','})...)
		arr = append(arr, ']')
		final = setMember(final, "output", arr)
	}
	return final, nil
}

// setMember returns obj with member key's value replaced by val (added
// when absent), in one pass over obj.
func setMember(obj []byte, key string, val []byte) []byte {
	out := make([]byte, 0, len(obj)+len(val))
	out = append(out, '{')
	m := codec.ObjectMembers(obj)
	for {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		if string(k) == key {
			continue
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, v...)
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, '"', ':')
	out = append(out, val...)
	return append(out, '}')
}
