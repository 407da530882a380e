package chaos

import (
	"encoding/json"
	"fmt"
	"strings"

	"slipstream/codec"
)

// Words are the text deltas of every good reply; a client that got a
// success must have received all of them.
var Words = []string{"alpha ", "beta ", "gamma"}

// js encodes a string as a JSON literal.
func js(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // strings always marshal
	}
	return string(b)
}

// ReplyBody returns a well-formed non-streamed reply of an upstream of
// dialect d whose text is the concatenation of words.
func ReplyBody(d codec.Dialect, model string, words []string) []byte {
	text := js(strings.Join(words, ""))
	m := js(model)
	switch d {
	case codec.DialectChat:
		return []byte(`{"id":"chatcmpl-chaos","object":"chat.completion","created":1,"model":` + m +
			`,"choices":[{"index":0,"message":{"role":"assistant","content":` + text + `},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`)
	case codec.DialectResponses:
		return []byte(responsesObject(m, "completed", responsesMessage(text, true), responsesUsage))
	case codec.DialectAnthropic:
		return []byte(`{"id":"msg_chaos","type":"message","role":"assistant","model":` + m +
			`,"content":[{"type":"text","text":` + text + `}],"stop_reason":"end_turn","stop_sequence":null,` +
			`"usage":{"input_tokens":3,"output_tokens":3}}`)
	case codec.DialectGemini:
		return []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":` + text + `}]},"finishReason":"STOP","index":0}],` +
			`"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":3,"totalTokenCount":6},"modelVersion":` + m + `,"responseId":"r1"}`)
	}
	panic(fmt.Sprintf("chaos: no reply for dialect %v", d))
}

// ReplyEvents returns the events of a well-formed streamed reply of an
// upstream of dialect d, each a complete SSE event; the last one is the
// dialect's terminal event.
func ReplyEvents(d codec.Dialect, model string, words []string) [][]byte {
	switch d {
	case codec.DialectChat:
		return chatEvents(js(model), words)
	case codec.DialectResponses:
		return responsesEvents(js(model), words)
	case codec.DialectAnthropic:
		return anthropicEvents(js(model), words)
	case codec.DialectGemini:
		return geminiEvents(js(model), words)
	}
	panic(fmt.Sprintf("chaos: no stream for dialect %v", d))
}

// Stream joins events into one stream.
func Stream(events [][]byte) []byte {
	var out []byte
	for _, ev := range events {
		out = append(out, ev...)
	}
	return out
}

func data(s string) []byte { return []byte("data: " + s + "\n\n") }

func named(name, s string) []byte { return []byte("event: " + name + "\ndata: " + s + "\n\n") }

func chatEvents(m string, words []string) [][]byte {
	head := `{"id":"chatcmpl-chaos","object":"chat.completion.chunk","created":1,"model":` + m + `,"choices":[`
	out := [][]byte{data(head + `{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)}
	for _, w := range words {
		out = append(out, data(head+`{"index":0,"delta":{"content":`+js(w)+`},"finish_reason":null}]}`))
	}
	return append(out,
		data(head+`{"index":0,"delta":{},"finish_reason":"stop"}]}`),
		data(head+`],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`),
		data("[DONE]"))
}

const responsesUsage = `{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":6}`

func responsesObject(m, status, output, usage string) string {
	return `{"id":"resp_chaos","object":"response","created_at":1,"status":"` + status + `","model":` + m +
		`,"error":null,"incomplete_details":null,"output":[` + output + `],"usage":` + usage + `}`
}

func responsesMessage(text string, done bool) string {
	if !done {
		return `{"id":"msg_chaos","type":"message","status":"in_progress","role":"assistant","content":[]}`
	}
	return `{"id":"msg_chaos","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + text + `,"annotations":[]}]}`
}

func responsesEvents(m string, words []string) [][]byte {
	var out [][]byte
	ev := func(typ, rest string) {
		out = append(out, named(typ, `{"type":"`+typ+`","sequence_number":`+fmt.Sprint(len(out))+rest+`}`))
	}
	text := js(strings.Join(words, ""))
	loc := `,"item_id":"msg_chaos","output_index":0,"content_index":0`
	ev("response.created", `,"response":`+responsesObject(m, "in_progress", "", "null"))
	ev("response.in_progress", `,"response":`+responsesObject(m, "in_progress", "", "null"))
	ev("response.output_item.added", `,"output_index":0,"item":`+responsesMessage(text, false))
	ev("response.content_part.added", loc+`,"part":{"type":"output_text","text":"","annotations":[]}`)
	for _, w := range words {
		ev("response.output_text.delta", loc+`,"delta":`+js(w)+`,"logprobs":[]`)
	}
	ev("response.output_text.done", loc+`,"text":`+text+`,"logprobs":[]`)
	ev("response.content_part.done", loc+`,"part":{"type":"output_text","text":`+text+`,"annotations":[]}`)
	ev("response.output_item.done", `,"output_index":0,"item":`+responsesMessage(text, true))
	ev("response.completed", `,"response":`+responsesObject(m, "completed", responsesMessage(text, true), responsesUsage))
	return out
}

func anthropicEvents(m string, words []string) [][]byte {
	out := [][]byte{
		named("message_start", `{"type":"message_start","message":{"id":"msg_chaos","type":"message","role":"assistant","model":`+m+
			`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`),
		named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
	}
	for _, w := range words {
		out = append(out, named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+js(w)+`}}`))
	}
	return append(out,
		named("content_block_stop", `{"type":"content_block_stop","index":0}`),
		named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`),
		named("message_stop", `{"type":"message_stop"}`))
}

func geminiEvents(m string, words []string) [][]byte {
	var out [][]byte
	for i, w := range words {
		tail := ""
		if i == len(words)-1 {
			tail = `,"finishReason":"STOP"`
		}
		usage := ""
		if i == len(words)-1 {
			usage = `"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":3,"totalTokenCount":6},`
		}
		out = append(out, data(`{"candidates":[{"content":{"role":"model","parts":[{"text":`+js(w)+`}]}`+tail+`,"index":0}],`+
			usage+`"modelVersion":`+m+`,"responseId":"r1"}`))
	}
	return out
}
