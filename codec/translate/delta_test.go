package translate

import (
	"testing"

	"slipstream/codec"
)

func TestDeltaOf(t *testing.T) {
	f := func(d codec.Dialect, data, want string, key int64, levels int) {
		t.Helper()
		got, ok := DeltaOf(d, []byte(data))
		if want == "" {
			if ok {
				t.Fatalf("%s: a delta %q", data, data[got.Start:got.End])
			}
			return
		}
		if !ok || data[got.Start:got.End] != want || got.Key != key || got.Levels != levels {
			t.Fatalf("%s: %+v %v, want %q key %d levels %d", data, got, ok, want, key, levels)
		}
	}
	f(codec.DialectAnthropic, `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hi \"x\""}}`, `Hi \"x\"`, 2, 1)
	f(codec.DialectAnthropic, `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`, `{\"a`, 1, 2)
	f(codec.DialectAnthropic, `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`, "", 0, 0)
	f(codec.DialectAnthropic, `{"index":3,"delta":{"text":"b\\\"","type":"text_delta"},"type":"content_block_delta"}`, `b\\\"`, 3, 1) // another member order
	f(codec.DialectAnthropic, `{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"x"},"extra":1}`, "x", 12, 1)
	f(codec.DialectAnthropic, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, "", 0, 0)
	f(codec.DialectAnthropic, `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, "", 0, 0)
	f(codec.DialectChat, `{"id":"c","choices":[{"index":0,"delta":{"content":"tok"},"finish_reason":null}]}`, "tok", 0, 1)
	f(codec.DialectChat, `{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}}]}`, "{}", 2, 2)
	f(codec.DialectChat, `{"id":"c","choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]}`, "", 0, 0)
	f(codec.DialectChat, `{"id":"c","choices":[],"usage":{"prompt_tokens":1}}`, "", 0, 0)
	f(codec.DialectResponses, `{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"ab"}`, "ab", 1<<32, 1)
	f(codec.DialectResponses, `{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"p"}`, `{\"p`, 2<<32, 2)
	f(codec.DialectResponses, `{"type":"response.output_text.done","output_index":1,"text":"ab"}`, "", 0, 0)
	f(codec.DialectGemini, `{"candidates":[{"content":{"parts":[{"text":"hm","thought":true},{"text":"yes"}]},"index":0}]}`, "yes", 0, 1)
	f(codec.DialectGemini, `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}`, "", 0, 0)
}
