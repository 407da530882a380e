package openai

import (
	"os"
	"strings"
	"testing"
)

func TestCheckResponsesStream(t *testing.T) {
	good, err := os.ReadFile("testdata/responses/encoder_stream.golden.sse")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckResponsesStream(good); err != nil {
		t.Fatalf("golden stream: %v", err)
	}
	// The upstream fixture is a valid client stream too (real OpenAI shape).
	up, err := os.ReadFile("testdata/responses/upstream_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckResponsesStream(up); err == nil || !strings.Contains(err.Error(), "response.output has 0 items") {
		t.Fatalf("upstream fixture (completed with empty output): %v", err)
	}

	// f breaks the golden stream with edit and expects an error containing want.
	f := func(edit func(string) string, want string) {
		t.Helper()
		err := CheckResponsesStream([]byte(edit(string(good))))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("fixture lacks %q", old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	dropEvent := func(typ string) func(string) string {
		return func(s string) string {
			i := strings.Index(s, "event: "+typ+"\n")
			j := strings.Index(s[i:], "\n\n")
			return s[:i] + s[i+j+2:]
		}
	}
	f(replace(`"sequence_number":5,`, `"sequence_number":6,`), "event 5 (response.reasoning_summary_text.delta): sequence_number 6, want 5")
	f(replace("event: response.output_text.delta\n", "event: response.output_text.deltas\n"), "does not match type")
	f(dropEvent("response.created"), "event 0 (response.in_progress): sequence_number 1, want 0")
	f(dropEvent("response.completed"), "stream ends without response.completed")
	f(func(s string) string { return strings.TrimSuffix(s, "\n") }, "does not end with a blank line")
	f(replace(`"output_index":1,"item":{"id":"msg_up1_1","type":"message","status":"completed"`, `"output_index":1,"item":{"id":"msg_other","type":"message","status":"completed"`), "done item message \"msg_other\", added message \"msg_up1_1\"")
	f(replace(`"delta":"check.\n"`, `"delta":"check!\n"`), "differs from its deltas")
	f(replace(`"item_id":"fc_call_1","output_index":2,"delta"`, `"item_id":"call_1","output_index":2,"delta"`), "not the call id")
	f(replace(`"input_tokens":120,`, `"input_tokens":120.5,`), "usage.input_tokens is not an integer")
	f(replace(`{"id":"rs_up1_0","type":"reasoning","summary":[{"type":"summary_text","text":"**Plan**\n\nCheck \"weather\"."}],"encrypted_content":"gAAAAB-xyz"},{"id":"msg_up1_1"`, `{"id":"msg_up1_1"`), "response.output has 3 items, 4 were done")
	f(replace(`"arguments":"{\"city\":\"Paris\"}","call_id":"call_1","name":"get_weather"}}`, `"arguments":{},"call_id":"call_1","name":"get_weather"}}`), "arguments missing or not a String")
	// Renaming an event to an unknown type keeps the sequence numbers.
	rename := func(typ string) func(string) string {
		return replace("event: "+typ+"\ndata: {\"type\":\""+typ+"\"", "event: response.x\ndata: {\"type\":\"response.x\"")
	}
	f(rename("response.output_item.done"), "items must be sequential")
	f(rename("response.content_part.added"), "delta outside an open part")
	f(rename("response.content_part.done"), "output_item.done while a part is open")
	f(replace("event: response.completed\n", "event: error\ndata: {\"type\":\"error\",\"sequence_number\":26}\n\nevent: response.completed\n"), "`error` event")
	f(func(s string) string { return s + "data: [DONE]\n\n" }, "event after the terminal event")
	f(replace(`"status":"completed","background"`, `"status":"in_progress","background"`), `response.status "in_progress", want "completed"`)
	f(func(string) string { return "" }, "empty stream")
}
