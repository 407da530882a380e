package translate

import (
	"encoding/json"
	"testing"
)

func TestStreamError(t *testing.T) {
	f := func(ev, want string) {
		t.Helper()
		got := StreamError([]byte(ev))
		if want == "<nil>" {
			if got != nil {
				t.Errorf("%q: got %q, want nil", ev, got)
			}
			return
		}
		if string(got) != want {
			t.Errorf("%q: got %q, want %q", ev, got, want)
		}
	}
	f("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}", `{"type":"error","error":{"type":"overloaded_error"}}`)
	f("event: error", `{}`)
	f("data: {\"type\":\"error\",\"code\":\"x\"}\r", `{"type":"error","code":"x"}`)
	f("event: response.failed\ndata: {\"type\":\"response.failed\"}", `{"type":"response.failed"}`)
	f("event: message_start\ndata: {\"type\":\"message_start\"}", "<nil>")
	f("data: {\"type\":\"response.created\"}", "<nil>")
}

func TestErrorSignal(t *testing.T) {
	f := func(data, body string, status int) {
		t.Helper()
		b, st := ErrorSignal([]byte(data))
		if string(b) != body || st != status {
			t.Errorf("%s: got %s %d, want %s %d", data, b, st, body, status)
		}
	}
	f(`{"type":"error","error":{"type":"usage_limit_reached","message":"limit","resets_at":1700000000}}`,
		`{"error":{"type":"usage_limit_reached","message":"limit","resets_at":1700000000}}`, 429)
	f(`{"type":"response.failed","response":{"error":{"code":"server_is_overloaded","message":"busy","resets_in_seconds":30}}}`,
		`{"error":{"type":"server_is_overloaded","message":"busy","resets_in_seconds":30}}`, 503)
	f(`{}`, `{"error":{"type":"","message":""}}`, 502)
	f(`{"code":"a\"b","message":"x\ny"}`, `{"error":{"type":"a\"b","message":"x\ny"}}`, 502)
}

func TestAggregateResponses(t *testing.T) {
	f := func(stream, body, errData string) {
		t.Helper()
		b, e := AggregateResponses([]byte(stream))
		if string(b) != body || string(e) != errData {
			t.Errorf("%q:\n got %s | %s\nwant %s | %s", stream, b, e, body, errData)
		}
	}
	item := `{"type":"message","content":[{"type":"output_text","text":"Hi"}]}`
	f("event: response.created\ndata: {\"type\":\"response.created\"}\n\n"+
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":"+item+"}\n\n"+
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"output\":[],\"usage\":{}}}\n\n",
		`{"id":"r","usage":{},"output":[`+item+`]}`, "")
	f("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"output\":[1]}}\n\n",
		`{"id":"r","output":[1]}`, "")
	f(": ping\n\nevent: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\"}\n\n",
		"", `{"type":"error","code":"rate_limit_exceeded"}`)
	f("event: response.created\ndata: {\"type\":\"response.created\"}\n\n",
		"", `{"type":"error","error":{"type":"server_error","message":"the account's stream ended without its final response"}}`)
}

// FuzzAggregateResponses: any stream aggregates without a panic into
// exactly one of a body or an error event's data; an error event's data
// read from a valid stream signals as valid JSON.
func FuzzAggregateResponses(f *testing.F) {
	f.Add([]byte("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"a\":1}}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[]}}\n\n"))
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"usage_limit_reached\",\"resets_at\":5}}\n\n"))
	f.Add([]byte("data: {\"type\":\"response.completed\",\"response\":{\"output\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		body, errData := AggregateResponses(stream)
		if (body == nil) == (errData == nil) {
			t.Fatalf("%q: body %q and error %q", stream, body, errData)
		}
		if errData != nil {
			if b, _ := ErrorSignal(errData); !json.Valid(b) {
				t.Fatalf("%q: signal %q is not JSON", errData, b)
			}
		}
	})
}
