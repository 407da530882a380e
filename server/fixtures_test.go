package server

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Request bodies and canned upstream answers shared by the budget tests
// and the benchmarks.

// chatBody makes a Chat Completions request of about n bytes.
func chatBody(n int, stream bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"model":"gpt-4.1","stream":%v,"messages":[{"role":"system","content":"You are terse."}`, stream)
	line := strings.Repeat("func main() { fmt.Println(\\\"hello, world\\\") } // code-like text\\n", 16)
	for i := 0; b.Len() < n-200; i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":"turn %d: %s"}`, i, line)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

const chatReply = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`

func httpReply(contentType, body string) []byte {
	return []byte("HTTP/1.1 200 OK\r\nContent-Type: " + contentType + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// Upstream answers of each dialect for the translated benchmark.
const (
	anthropicReply = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Done: the handler now returns JSON."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2900,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":12}}`
	responsesReply = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done: the handler now returns JSON.","annotations":[]}]}],"usage":{"input_tokens":2900,"input_tokens_details":{"cached_tokens":0},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":2912}}`
)

// Upstream answers, one per dialect.
const geminiReply = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Done."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2900,"candidatesTokenCount":2,"totalTokenCount":2902},"modelVersion":"g","responseId":"r1"}`
