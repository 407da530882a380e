package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Upstream dialects a stub speaks.
const (
	dialectChat      = "chat"
	dialectResponses = "responses"
	dialectAnthropic = "anthropic"
)

// stubPath is the path each dialect's stub serves generation on. slipstream
// POSTs {base_url}/chat/completions and {base_url}/responses for openai
// kinds (base_url ends in /v1) and {base_url}/v1/messages for anthropic.
var stubPath = map[string]string{
	dialectChat:      "/v1/chat/completions",
	dialectResponses: "/v1/responses",
	dialectAnthropic: "/v1/messages",
}

// stubReq is one request the stub received.
type stubReq struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	JSON         map[string]any // Body decoded, nil when it is not a JSON object
}

// stubAnswer is what the stub sends back: text, or one tool call when Tool
// is set.
type stubAnswer struct {
	Text     string
	Tool     string // tool name; empty for a text answer
	ToolArgs string // JSON object text
	CallID   string
}

// stub is an in-test upstream speaking one provider dialect over SSE (and
// plain JSON when the request does not stream). It records every request;
// decide picks each answer from the decoded request.
type stub struct {
	t       *testing.T
	dialect string
	srv     *httptest.Server
	decide  func(r *stubReq) stubAnswer

	mu   sync.Mutex
	reqs []*stubReq
}

func newStub(t *testing.T, dialect string, decide func(r *stubReq) stubAnswer) *stub {
	s := &stub{t: t, dialect: dialect, decide: decide}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// BaseURL is the base_url slipstream's provider should use.
func (s *stub) BaseURL() string {
	if s.dialect == dialectAnthropic {
		return s.srv.URL
	}
	return s.srv.URL + "/v1"
}

// Requests returns the generation requests received so far (POSTs to the
// dialect's path).
func (s *stub) Requests() []*stubReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*stubReq
	for _, r := range s.reqs {
		if r.Method == "POST" && r.Path == stubPath[s.dialect] {
			out = append(out, r)
		}
	}
	return out
}

// Dump describes every request received, for failure messages.
func (s *stub) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for i, r := range s.reqs {
		fmt.Fprintf(&b, "#%d %s %s (%d bytes): %s\n", i, r.Method, r.Path, len(r.Body), clip(r.Body, 1500))
	}
	return b.String()
}

func (s *stub) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	r := &stubReq{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body}
	json.Unmarshal(body, &r.JSON)
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	n := len(s.reqs)
	s.mu.Unlock()
	if d := os.Getenv("E2E_DUMP_DIR"); d != "" {
		// Debugging aid: keep what the upstream received.
		name := fmt.Sprintf("%s-%s-%02d.json", strings.ReplaceAll(s.t.Name(), "/", "_"), s.dialect, n)
		os.WriteFile(filepath.Join(d, name), body, 0o644)
	}
	if hr.Method != "POST" || hr.URL.Path != stubPath[s.dialect] || r.JSON == nil {
		s.t.Errorf("stub %s: unexpected request %s %s: %s", s.dialect, hr.Method, hr.URL.Path, clip(body, 500))
		http.Error(w, `{"error":{"message":"stub: unexpected request","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	a := s.decide(r)
	model, _ := r.JSON["model"].(string)
	stream, _ := r.JSON["stream"].(bool)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, s.body(model, a))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	for _, ev := range s.events(model, a) {
		io.WriteString(w, ev)
		if fl != nil {
			fl.Flush()
		}
	}
}

// Fixed usage numbers every stub answer reports.
const (
	stubIn  = 123
	stubOut = 7
)

// js encodes v as JSON (for strings: a quoted, escaped literal).
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// halves splits s in two, so every stream carries more than one delta.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	r := []rune(s)
	return []string{string(r[:len(r)/2]), string(r[len(r)/2:])}
}

func (s *stub) events(model string, a stubAnswer) []string {
	switch s.dialect {
	case dialectChat:
		return chatEvents(model, a)
	case dialectResponses:
		return responsesEvents(model, a)
	default:
		return anthropicEvents(model, a)
	}
}

func (s *stub) body(model string, a stubAnswer) string {
	switch s.dialect {
	case dialectChat:
		return chatBody(model, a)
	case dialectResponses:
		return responsesBody(model, a)
	default:
		return anthropicBody(model, a)
	}
}

// --- OpenAI Chat Completions ---

func chatEvents(model string, a stubAnswer) []string {
	head := `{"id":"chatcmpl-stub","object":"chat.completion.chunk","created":1730000000,"model":` + js(model) + `,`
	chunk := func(choices string) string { return "data: " + head + `"choices":[` + choices + `]}` + "\n\n" }
	var out []string
	finish := "stop"
	if a.Tool == "" {
		out = append(out, chunk(`{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`))
		for _, p := range halves(a.Text) {
			out = append(out, chunk(`{"index":0,"delta":{"content":`+js(p)+`},"logprobs":null,"finish_reason":null}`))
		}
	} else {
		finish = "tool_calls"
		out = append(out, chunk(`{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":`+js(a.CallID)+`,"type":"function","function":{"name":`+js(a.Tool)+`,"arguments":""}}]},"logprobs":null,"finish_reason":null}`))
		for _, p := range halves(a.ToolArgs) {
			out = append(out, chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+js(p)+`}}]},"logprobs":null,"finish_reason":null}`))
		}
	}
	out = append(out, chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"`+finish+`"}`))
	out = append(out, "data: "+head+`"choices":[],"usage":`+chatUsage()+"}\n\n")
	out = append(out, "data: [DONE]\n\n")
	return out
}

func chatUsage() string {
	return fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`, stubIn, stubOut, stubIn+stubOut)
}

func chatBody(model string, a stubAnswer) string {
	msg := `{"role":"assistant","content":` + js(a.Text) + `,"refusal":null,"annotations":[]}`
	finish := "stop"
	if a.Tool != "" {
		finish = "tool_calls"
		msg = `{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":` + js(a.CallID) + `,"type":"function","function":{"name":` + js(a.Tool) + `,"arguments":` + js(a.ToolArgs) + `}}]}`
	}
	return `{"id":"chatcmpl-stub","object":"chat.completion","created":1730000000,"model":` + js(model) +
		`,"choices":[{"index":0,"logprobs":null,"finish_reason":"` + finish + `","message":` + msg + `}],"usage":` + chatUsage() + `}`
}

// --- OpenAI Responses ---

func responsesUsage() string {
	return fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}`, stubIn, stubOut, stubIn+stubOut)
}

func responsesItem(a stubAnswer, done bool) string {
	if a.Tool != "" {
		status, args := "in_progress", ""
		if done {
			status, args = "completed", a.ToolArgs
		}
		return `{"id":"fc_stub","type":"function_call","status":"` + status + `","call_id":` + js(a.CallID) + `,"name":` + js(a.Tool) + `,"arguments":` + js(args) + `}`
	}
	if !done {
		return `{"id":"msg_stub","type":"message","status":"in_progress","role":"assistant","content":[]}`
	}
	return `{"id":"msg_stub","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + js(a.Text) + `,"annotations":[]}]}`
}

func responsesObject(model, status, output, usage string) string {
	return `{"id":"resp_stub","object":"response","created_at":1730000000,"status":"` + status + `","model":` + js(model) +
		`,"error":null,"incomplete_details":null,"instructions":null,"metadata":{},"parallel_tool_calls":true,"temperature":1.0,"top_p":1.0,"tool_choice":"auto","tools":[],"output":[` + output + `],"usage":` + usage + `}`
}

func responsesEvents(model string, a stubAnswer) []string {
	var out []string
	ev := func(typ, rest string) {
		out = append(out, "event: "+typ+"\ndata: "+`{"type":"`+typ+`","sequence_number":`+fmt.Sprint(len(out))+rest+"}\n\n")
	}
	ev("response.created", `,"response":`+responsesObject(model, "in_progress", "", "null"))
	ev("response.in_progress", `,"response":`+responsesObject(model, "in_progress", "", "null"))
	ev("response.output_item.added", `,"output_index":0,"item":`+responsesItem(a, false))
	if a.Tool != "" {
		for _, p := range halves(a.ToolArgs) {
			ev("response.function_call_arguments.delta", `,"item_id":"fc_stub","output_index":0,"delta":`+js(p))
		}
		ev("response.function_call_arguments.done", `,"item_id":"fc_stub","output_index":0,"name":`+js(a.Tool)+`,"arguments":`+js(a.ToolArgs))
	} else {
		loc := `,"item_id":"msg_stub","output_index":0,"content_index":0`
		ev("response.content_part.added", loc+`,"part":{"type":"output_text","text":"","annotations":[]}`)
		for _, p := range halves(a.Text) {
			ev("response.output_text.delta", loc+`,"delta":`+js(p)+`,"logprobs":[]`)
		}
		ev("response.output_text.done", loc+`,"text":`+js(a.Text)+`,"logprobs":[]`)
		ev("response.content_part.done", loc+`,"part":{"type":"output_text","text":`+js(a.Text)+`,"annotations":[]}`)
	}
	ev("response.output_item.done", `,"output_index":0,"item":`+responsesItem(a, true))
	ev("response.completed", `,"response":`+responsesObject(model, "completed", responsesItem(a, true), responsesUsage()))
	return out
}

func responsesBody(model string, a stubAnswer) string {
	return responsesObject(model, "completed", responsesItem(a, true), responsesUsage())
}

// --- Anthropic Messages ---

func anthropicEvents(model string, a stubAnswer) []string {
	var out []string
	ev := func(typ, data string) { out = append(out, "event: "+typ+"\ndata: "+data+"\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_stub","type":"message","role":"assistant","model":`+js(model)+
		`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+fmt.Sprint(stubIn)+`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
	stop := "end_turn"
	if a.Tool == "" {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("ping", `{"type":"ping"}`)
		for _, p := range halves(a.Text) {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+js(p)+`}}`)
		}
	} else {
		stop = "tool_use"
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":`+js(a.CallID)+`,"name":`+js(a.Tool)+`,"input":{}}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`)
		for _, p := range halves(a.ToolArgs) {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+js(p)+`}}`)
		}
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":`+fmt.Sprint(stubOut)+`}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return out
}

func anthropicBody(model string, a stubAnswer) string {
	content := `{"type":"text","text":` + js(a.Text) + `}`
	stop := "end_turn"
	if a.Tool != "" {
		stop = "tool_use"
		content = `{"type":"tool_use","id":` + js(a.CallID) + `,"name":` + js(a.Tool) + `,"input":` + a.ToolArgs + `}`
	}
	return `{"id":"msg_stub","type":"message","role":"assistant","model":` + js(model) + `,"content":[` + content +
		`],"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":` + fmt.Sprint(stubIn) +
		`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + fmt.Sprint(stubOut) + `}}`
}
