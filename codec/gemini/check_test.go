package gemini

import (
	"strings"
	"testing"
)

func TestCheckStream(t *testing.T) {
	const (
		ids   = `"modelVersion":"m","responseId":"r"`
		text  = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"index":0}],` + ids + "}\n\n"
		final = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],` +
			`"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":1,"totalTokenCount":6},` + ids + "}\n\n"
		errEv = `data: {"error":{"code":503,"message":"x","status":"UNAVAILABLE"}}` + "\n\n"
	)
	f := func(stream, wantErr string) {
		t.Helper()
		err := CheckStream([]byte(stream))
		switch {
		case wantErr == "" && err != nil:
			t.Fatalf("%s: unexpected %v", stream, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Fatalf("%s: got %v, want %q", stream, err, wantErr)
		}
	}
	// Valid streams.
	f(text+final, "")
	f(": ping\n\n"+text+text+final, "")
	f(text+errEv, "")
	f(errEv, "")
	f(strings.ReplaceAll(text+final, "\n", "\r"), "")
	f(`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c","name":"f","args":{"a":1}},"thoughtSignature":"s"}]},"index":0}],`+ids+"}\n\n"+final, "")

	// Broken streams.
	f("", "does not end with a blank line")
	f(text+final[:len(final)-1], "does not end with a blank line")
	f("\n\n", "no events")
	f(text, "ends without a finishReason")
	f(final+text, "event 1: event after the final event")
	f(errEv+text, "event 1: event after the final event")
	f("event: message\n"+final, "event 0: unexpected event name")
	f("data: [DONE]\n\n", "event 0: data is not a JSON object")
	f(text+"data: {\"candidates\":[]}\n\n", "event 1: modelVersion and responseId must be strings")
	f(`data: {"candidates":[],`+ids+"}\n\n", "candidates must be a non-empty array")
	f(text+strings.Replace(final, `"responseId":"r"`, `"responseId":"q"`, 1), "event 1: modelVersion/responseId changed")
	f(strings.Replace(final, `"role":"model"`, `"role":"assistant"`, 1), `content.role must be "model"`)
	f(strings.Replace(final, `{"text":""}`, `{"text":1}`, 1), "text must be a string")
	f(strings.Replace(final, `{"text":""}`, `{"text":"","functionCall":{"name":"f"}}`, 1), "part holds 2 data members")
	f(strings.Replace(final, `{"text":""}`, `{"thought":true}`, 1), "part holds 0 data members")
	f(strings.Replace(final, `{"text":""}`, `{"text":"","thought":"yes"}`, 1), "thought must be a bool")
	f(strings.Replace(final, `{"text":""}`, `{"functionCall":{"name":"","args":{}}}`, 1), "functionCall.name must be")
	f(strings.Replace(final, `{"text":""}`, `{"functionCall":{"name":"f","args":"{}"}}`, 1), "functionCall.args must be an object")
	f(strings.Replace(final, `{"text":""}`, `{"toolCall":{}}`, 1), `unknown member "toolCall"`)
	f(strings.Replace(final, `,"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":1,"totalTokenCount":6}`, "", 1),
		"final event lacks usageMetadata")
	f(strings.Replace(final, `"totalTokenCount":6`, `"totalTokenCount":5`, 1), "totalTokenCount 5 != sum of counts 6")
	f(strings.Replace(final, `"promptTokenCount":3`, `"promptTokenCount":3.5`, 1), "promptTokenCount must be a non-negative integer")
	f(strings.Replace(final, `"finishReason":"STOP"`, `"finishReason":""`, 1), "finishReason must be a non-empty string")
	f(`data: {"error":{"code":"503","message":"x","status":"UNAVAILABLE"}}`+"\n\n", "error needs a numeric code")
}
