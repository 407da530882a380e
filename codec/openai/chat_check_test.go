package openai

import (
	"strings"
	"testing"
)

// chatChunk builds one chunk event with the standard envelope.
func chatChunk(rest string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",` + rest + "}\n\n"
}

const (
	chatRole   = `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`
	chatStopCh = `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]`
	chatDoneEv = "data: [DONE]\n\n"
)

func TestCheckChatStreamOK(t *testing.T) {
	f := func(stream string) {
		t.Helper()
		if err := CheckChatStream([]byte(stream)); err != nil {
			t.Fatalf("unexpected error: %v\n%s", err, stream)
		}
	}
	f(chatChunk(chatRole) + ": ping\n\n" + chatChunk(chatStopCh) + chatDoneEv)
	f(chatChunk(chatRole) + chatChunk(chatStopCh) + chatChunk(`"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`) + chatDoneEv)
	f(chatChunk(chatRole) + `data: {"error":{"message":"x","type":"server_error"}}` + "\n\n")
	f(`data: {"error":{"message":"x"}}` + "\n\n")
}

func TestCheckChatStreamBroken(t *testing.T) {
	f := func(stream, want string) {
		t.Helper()
		err := CheckChatStream([]byte(stream))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want an error containing %q\n%s", err, want, stream)
		}
	}
	call0 := `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]`
	tools := `"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`

	f(chatChunk(chatRole)+chatChunk(chatStopCh), "event 2: stream ended without data: [DONE]")
	f(chatChunk(chatRole)+chatChunk(chatStopCh)+chatDoneEv+chatChunk(chatStopCh), "event 3: event after data: [DONE]")
	f(chatChunk(chatRole)+chatDoneEv, "choice 0 has no finish_reason")
	f(chatDoneEv, "no chunk before [DONE]")
	f(chatChunk(`"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]`)+chatChunk(chatStopCh)+chatDoneEv, `event 0: first chunk of a choice needs delta.role`)
	f(chatChunk(chatRole)+chatChunk(chatRole)+chatChunk(chatStopCh)+chatDoneEv, "event 1: delta.role repeated")
	f(chatChunk(chatRole)+chatChunk(chatStopCh)+chatChunk(chatStopCh)+chatDoneEv, "event 2: choice 0: chunk after finish_reason")
	f(chatChunk(chatRole)+`data: {"id":"d","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}`+"\n\n", "event 1: id, created or model changed")
	f(`data: {"id":"c","object":"chat.completion","created":1,"model":"m","choices":[]}`+"\n\n", `object is "chat.completion"`)
	f(`data: {"id":"c","object":"chat.completion.chunk","created":1.5,"model":"m","choices":[]}`+"\n\n", "integer created")
	f("event: x\n"+chatChunk(chatRole), `unexpected event name "x"`)
	f(chatChunk(chatRole)+"data: {\n\n", "event 1: invalid JSON")
	f(chatChunk(chatRole)+chatChunk(`"choices":[{"index":0,"delta":{"content":5}}]`), "delta.content must be a string")
	f(chatChunk(chatRole)+chatChunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"x","type":"function","function":{"name":"f","arguments":""}}]}}]`), "index 1 skips ahead of 0")
	f(chatChunk(chatRole)+chatChunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":{"name":"f","arguments":""}}]}}]`), "first fragment needs an id")
	f(chatChunk(chatRole)+chatChunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"f"}}]}}]`), "needs a string function.arguments")
	f(chatChunk(chatRole)+chatChunk(call0)+chatChunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":"{}"}}]}}]`), "later fragment repeats id")
	f(chatChunk(chatRole)+chatChunk(call0)+chatChunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"g","arguments":"{}"}}]}}]`), "later fragment needs only function.arguments")
	f(chatChunk(chatRole)+chatChunk(call0)+chatChunk(chatStopCh)+chatDoneEv, `finish_reason "stop" after tool calls`)
	f(chatChunk(chatRole)+chatChunk(tools)+chatDoneEv, "tool_calls without tool calls")
	f(chatChunk(chatRole)+chatChunk(`"choices":[{"index":0,"delta":{},"finish_reason":"done"}]`), "unknown finish_reason")
	f(chatChunk(chatRole)+chatChunk(`"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`), "usage chunk before finish_reason")
	f(chatChunk(chatRole)+chatChunk(chatStopCh)+chatChunk(`"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}`), "usage.total_tokens must be an integer")
	f(chatChunk(chatRole)+chatChunk(`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`), "usage chunk must have choices: []")
	f(chatChunk(chatRole)+`data: {"error":{"message":"x"}}`+"\n\n"+chatDoneEv, "event after the in-band error")
	f(`data: {"error":{"code":1}}`+"\n\n", "error event without a string error.message")
}
