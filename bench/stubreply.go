package bench

import "strconv"

// The stub's replies follow the providers' documented shapes (https://platform.openai.com/docs/api-reference/chat-streaming,
// https://platform.openai.com/docs/api-reference/responses-streaming, https://docs.anthropic.com/en/api/messages-streaming,
// https://ai.google.dev/api/generate-content): every event is `event: <type>` (where the dialect names events)
// plus `data: <json>` and a blank line.

// deltaText is the text of each delta event.
const deltaText = "lorem ipsum "

// buildReply builds dialect d's single body and an n-delta stream.
func buildReply(d Dialect, n int) stubReply {
	var r stubReply
	switch d {
	case Chat:
		r.single = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1730000000,"model":"bench","choices":[{"index":0,"logprobs":null,"finish_reason":"stop","message":{"role":"assistant","content":"Hi there","refusal":null,"annotations":[]}}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint":"fp_bench"}`)
		r.events = chatEvents(n)
	case Responses:
		r.single = []byte(`{"id":"resp_bench","object":"response","created_at":1730000000,"status":"completed","model":"bench","error":null,"incomplete_details":null,"instructions":null,"metadata":{},"parallel_tool_calls":true,"temperature":1.0,"top_p":1.0,"tool_choice":"auto","tools":[],"output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi there","annotations":[]}]}],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":15}}`)
		r.events = responsesEvents(n)
	case Anthropic:
		r.single = []byte(`{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[{"type":"text","text":"Hi there"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}}`)
		r.events = anthropicEvents(n)
	case Gemini:
		r.single = []byte(`{"candidates":[{"index":0,"finishReason":"STOP","content":{"role":"model","parts":[{"text":"Hi there"}]}}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":3,"totalTokenCount":15},"modelVersion":"bench","responseId":"bench"}`)
		r.events = geminiEvents(n)
	case CountTokens:
		r.single = []byte(`{"input_tokens":2095}`)
	}
	for _, ev := range r.events {
		r.stream = append(r.stream, ev...)
	}
	return r
}

// sseEvent returns one framed event; name may be empty.
func sseEvent(name, data string) []byte {
	var b []byte
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

func chatEvents(n int) [][]byte {
	const env = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1730000000,"model":"bench","choices":`
	evs := [][]byte{sseEvent("", env+`[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`)}
	for i := 0; i < n; i++ {
		evs = append(evs, sseEvent("", env+`[{"index":0,"delta":{"content":"`+deltaText+`"},"logprobs":null,"finish_reason":null}],"usage":null}`))
	}
	evs = append(evs,
		sseEvent("", env+`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`),
		sseEvent("", env+`[],"usage":{"prompt_tokens":12,"completion_tokens":`+strconv.Itoa(n)+`,"total_tokens":`+strconv.Itoa(12+n)+`,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`),
		sseEvent("", "[DONE]"))
	return evs
}

func responsesEvents(n int) [][]byte {
	seq := 0
	ev := func(typ, rest string) []byte {
		b := sseEvent(typ, `{"type":"`+typ+`","sequence_number":`+strconv.Itoa(seq)+rest+`}`)
		seq++
		return b
	}
	const resp = `"id":"resp_bench","object":"response","created_at":1730000000,"model":"bench","error":null,"incomplete_details":null,"instructions":null,"metadata":{},"parallel_tool_calls":true,"temperature":1.0,"top_p":1.0,"tool_choice":"auto","tools":[]`
	const item = `"item_id":"msg_1","output_index":0,"content_index":0`
	text := ""
	for i := 0; i < n; i++ {
		text += deltaText
	}
	evs := [][]byte{
		ev("response.created", `,"response":{`+resp+`,"status":"in_progress","output":[],"usage":null}`),
		ev("response.in_progress", `,"response":{`+resp+`,"status":"in_progress","output":[],"usage":null}`),
		ev("response.output_item.added", `,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`),
		ev("response.content_part.added", `,`+item+`,"part":{"type":"output_text","text":"","annotations":[]}`),
	}
	for i := 0; i < n; i++ {
		evs = append(evs, ev("response.output_text.delta", `,`+item+`,"delta":"`+deltaText+`","logprobs":[]`))
	}
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"` + text + `","annotations":[]}]}`
	return append(evs,
		ev("response.output_text.done", `,`+item+`,"text":"`+text+`","logprobs":[]`),
		ev("response.content_part.done", `,`+item+`,"part":{"type":"output_text","text":"`+text+`","annotations":[]}`),
		ev("response.output_item.done", `,"output_index":0,"item":`+msg),
		ev("response.completed", `,"response":{`+resp+`,"status":"completed","output":[`+msg+`],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":`+strconv.Itoa(n)+`,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`+strconv.Itoa(12+n)+`}}`))
}

func anthropicEvents(n int) [][]byte {
	ev := func(typ, rest string) []byte {
		return sseEvent(typ, `{"type":"`+typ+`"`+rest+`}`)
	}
	evs := [][]byte{
		ev("message_start", `,"message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}`),
		ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`),
		ev("ping", ""),
	}
	for i := 0; i < n; i++ {
		evs = append(evs, ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":"`+deltaText+`"}`))
	}
	return append(evs,
		ev("content_block_stop", `,"index":0`),
		ev("message_delta", `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(n)+`}`),
		ev("message_stop", ""))
}

func geminiEvents(n int) [][]byte {
	var evs [][]byte
	for i := 0; i < n; i++ {
		finish := ""
		if i == n-1 {
			finish = `,"finishReason":"STOP"`
		}
		evs = append(evs, sseEvent("", `{"candidates":[{"content":{"role":"model","parts":[{"text":"`+deltaText+`"}]}`+finish+`,"index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":`+strconv.Itoa(i+1)+`,"totalTokenCount":`+strconv.Itoa(13+i)+`},"modelVersion":"bench","responseId":"bench"}`))
	}
	return evs
}
