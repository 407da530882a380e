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
	dialectGemini    = "gemini"
)

// stubPath is the path each dialect's stub serves generation on. slipstream
// POSTs {base_url}/chat/completions and {base_url}/responses for openai
// kinds (base_url ends in /v1) and {base_url}/v1/messages for anthropic.
var stubPath = map[string]string{
	dialectChat:      "/v1/chat/completions",
	dialectResponses: "/v1/responses",
	dialectAnthropic: "/v1/messages",
	dialectGemini:    "/v1beta/models/", // + {model}:generateContent or :streamGenerateContent
}

// isGenerate reports whether a request is a generation call in dialect.
func isGenerate(dialect, method, path string) bool {
	if method != "POST" {
		return false
	}
	if dialect != dialectGemini {
		return path == stubPath[dialect]
	}
	rest, ok := strings.CutPrefix(path, stubPath[dialectGemini])
	return ok && (strings.HasSuffix(rest, ":generateContent") || strings.HasSuffix(rest, ":streamGenerateContent"))
}

// stubReq is one request the stub received.
type stubReq struct {
	Method, Path string
	Query        string
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
	// Thinking, when set, comes first: a Responses reasoning item with a
	// summary and encrypted_content Signature, an Anthropic thinking block
	// with signature Signature, or Chat reasoning_content deltas.
	Thinking  string
	Signature string
	// Status, when set, answers with that HTTP status, Body (JSON) and
	// Header instead of a reply.
	Status int
	Body   string
	Header map[string]string
	// Truncate sends only the first half of the stream's events, then
	// ends the response without the dialect's terminal event.
	Truncate bool
	// Custom makes a Responses stub answer a custom_tool_call whose input
	// is ToolArgs as free text (other dialects have only JSON arguments).
	Custom bool
	// SignedText puts a Gemini signature on the last non-empty text
	// increment instead of a trailing empty part.
	SignedText bool
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
	if s.dialect == dialectAnthropic || s.dialect == dialectGemini {
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
		if isGenerate(s.dialect, r.Method, r.Path) {
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
	r := &stubReq{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body}
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
	if !isGenerate(s.dialect, hr.Method, hr.URL.Path) || r.JSON == nil {
		s.t.Errorf("stub %s: unexpected request %s %s: %s", s.dialect, hr.Method, hr.URL.Path, clip(body, 500))
		http.Error(w, `{"error":{"message":"stub: unexpected request","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	a := s.decide(r)
	if a.Status != 0 {
		for k, v := range a.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.Status)
		io.WriteString(w, a.Body)
		return
	}
	model, _ := r.JSON["model"].(string)
	stream, _ := r.JSON["stream"].(bool)
	if s.dialect == dialectGemini {
		model, _, _ = strings.Cut(strings.TrimPrefix(hr.URL.Path, stubPath[dialectGemini]), ":")
		stream = strings.HasSuffix(hr.URL.Path, ":streamGenerateContent")
		if stream && hr.URL.Query().Get("alt") != "sse" {
			s.t.Errorf("stub gemini: streamGenerateContent without alt=sse: %s", hr.URL)
		}
	}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, s.body(model, a))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	evs := s.events(model, a)
	if a.Truncate {
		evs = evs[:len(evs)/2]
	}
	for _, ev := range evs {
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
	case dialectGemini:
		return geminiEvents(model, a)
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
	case dialectGemini:
		return geminiBody(model, a)
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
	if a.Thinking != "" {
		out = append(out, chunk(`{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}`))
		for _, p := range halves(a.Thinking) {
			out = append(out, chunk(`{"index":0,"delta":{"reasoning_content":`+js(p)+`},"logprobs":null,"finish_reason":null}`))
		}
	}
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
	reasoning := ""
	if a.Thinking != "" {
		reasoning = `"reasoning_content":` + js(a.Thinking) + `,`
	}
	msg := `{"role":"assistant",` + reasoning + `"content":` + js(a.Text) + `,"refusal":null,"annotations":[]}`
	finish := "stop"
	if a.Tool != "" {
		finish = "tool_calls"
		msg = `{"role":"assistant",` + reasoning + `"content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":` + js(a.CallID) + `,"type":"function","function":{"name":` + js(a.Tool) + `,"arguments":` + js(a.ToolArgs) + `}}]}`
	}
	return `{"id":"chatcmpl-stub","object":"chat.completion","created":1730000000,"model":` + js(model) +
		`,"choices":[{"index":0,"logprobs":null,"finish_reason":"` + finish + `","message":` + msg + `}],"usage":` + chatUsage() + `}`
}

// --- OpenAI Responses ---

func responsesUsage() string {
	return fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}`, stubIn, stubOut, stubIn+stubOut)
}

func responsesItem(a stubAnswer, done bool) string {
	if a.Tool != "" && a.Custom {
		status, input := "in_progress", ""
		if done {
			status, input = "completed", a.ToolArgs
		}
		return `{"id":"ctc_stub","type":"custom_tool_call","status":"` + status + `","call_id":` + js(a.CallID) + `,"name":` + js(a.Tool) + `,"input":` + js(input) + `}`
	}
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

func responsesReasoning(a stubAnswer, done bool) string {
	if !done {
		return `{"id":"rs_stub","type":"reasoning","summary":[]}`
	}
	return `{"id":"rs_stub","type":"reasoning","summary":[{"type":"summary_text","text":` + js(a.Thinking) + `}],"encrypted_content":` + js(a.Signature) + `}`
}

// responsesOutput is the response's output array content when done.
func responsesOutput(a stubAnswer) string {
	if a.Thinking == "" {
		return responsesItem(a, true)
	}
	return responsesReasoning(a, true) + "," + responsesItem(a, true)
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
	idx := 0
	if a.Thinking != "" {
		loc := `,"item_id":"rs_stub","output_index":0,"summary_index":0`
		ev("response.output_item.added", `,"output_index":0,"item":`+responsesReasoning(a, false))
		ev("response.reasoning_summary_part.added", loc+`,"part":{"type":"summary_text","text":""}`)
		for _, p := range halves(a.Thinking) {
			ev("response.reasoning_summary_text.delta", loc+`,"delta":`+js(p))
		}
		ev("response.reasoning_summary_text.done", loc+`,"text":`+js(a.Thinking))
		ev("response.reasoning_summary_part.done", loc+`,"part":{"type":"summary_text","text":`+js(a.Thinking)+`}`)
		ev("response.output_item.done", `,"output_index":0,"item":`+responsesReasoning(a, true))
		idx = 1
	}
	oi := `,"output_index":` + fmt.Sprint(idx)
	ev("response.output_item.added", oi+`,"item":`+responsesItem(a, false))
	if a.Tool != "" && a.Custom {
		for _, p := range halves(a.ToolArgs) {
			ev("response.custom_tool_call_input.delta", `,"item_id":"ctc_stub"`+oi+`,"delta":`+js(p))
		}
		ev("response.custom_tool_call_input.done", `,"item_id":"ctc_stub"`+oi+`,"input":`+js(a.ToolArgs))
	} else if a.Tool != "" {
		for _, p := range halves(a.ToolArgs) {
			ev("response.function_call_arguments.delta", `,"item_id":"fc_stub"`+oi+`,"delta":`+js(p))
		}
		ev("response.function_call_arguments.done", `,"item_id":"fc_stub"`+oi+`,"name":`+js(a.Tool)+`,"arguments":`+js(a.ToolArgs))
	} else {
		loc := `,"item_id":"msg_stub"` + oi + `,"content_index":0`
		ev("response.content_part.added", loc+`,"part":{"type":"output_text","text":"","annotations":[]}`)
		for _, p := range halves(a.Text) {
			ev("response.output_text.delta", loc+`,"delta":`+js(p)+`,"logprobs":[]`)
		}
		ev("response.output_text.done", loc+`,"text":`+js(a.Text)+`,"logprobs":[]`)
		ev("response.content_part.done", loc+`,"part":{"type":"output_text","text":`+js(a.Text)+`,"annotations":[]}`)
	}
	ev("response.output_item.done", oi+`,"item":`+responsesItem(a, true))
	ev("response.completed", `,"response":`+responsesObject(model, "completed", responsesOutput(a), responsesUsage()))
	return out
}

func responsesBody(model string, a stubAnswer) string {
	return responsesObject(model, "completed", responsesOutput(a), responsesUsage())
}

// --- Anthropic Messages ---

func anthropicEvents(model string, a stubAnswer) []string {
	var out []string
	ev := func(typ, data string) { out = append(out, "event: "+typ+"\ndata: "+data+"\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_stub","type":"message","role":"assistant","model":`+js(model)+
		`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+fmt.Sprint(stubIn)+`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
	stop := "end_turn"
	i := "0"
	if a.Thinking != "" {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		for _, p := range halves(a.Thinking) {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":`+js(p)+`}}`)
		}
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":`+js(a.Signature)+`}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		i = "1"
	}
	if a.Tool == "" {
		ev("content_block_start", `{"type":"content_block_start","index":`+i+`,"content_block":{"type":"text","text":""}}`)
		ev("ping", `{"type":"ping"}`)
		for _, p := range halves(a.Text) {
			ev("content_block_delta", `{"type":"content_block_delta","index":`+i+`,"delta":{"type":"text_delta","text":`+js(p)+`}}`)
		}
	} else {
		stop = "tool_use"
		ev("content_block_start", `{"type":"content_block_start","index":`+i+`,"content_block":{"type":"tool_use","id":`+js(a.CallID)+`,"name":`+js(a.Tool)+`,"input":{}}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":`+i+`,"delta":{"type":"input_json_delta","partial_json":""}}`)
		for _, p := range halves(a.ToolArgs) {
			ev("content_block_delta", `{"type":"content_block_delta","index":`+i+`,"delta":{"type":"input_json_delta","partial_json":`+js(p)+`}}`)
		}
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":`+i+`}`)
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
	if a.Thinking != "" {
		content = `{"type":"thinking","thinking":` + js(a.Thinking) + `,"signature":` + js(a.Signature) + `},` + content
	}
	return `{"id":"msg_stub","type":"message","role":"assistant","model":` + js(model) + `,"content":[` + content +
		`],"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":` + fmt.Sprint(stubIn) +
		`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + fmt.Sprint(stubOut) + `}}`
}

// --- Gemini generateContent ---

func geminiUsage(final bool) string {
	if !final {
		return fmt.Sprintf(`{"promptTokenCount":%d,"totalTokenCount":%d}`, stubIn, stubIn)
	}
	return fmt.Sprintf(`{"promptTokenCount":%d,"candidatesTokenCount":%d,"totalTokenCount":%d}`, stubIn, stubOut, stubIn+stubOut)
}

// geminiParts are the answer's parts: an optional thought, then text or
// one functionCall (no id, as the Developer API sends it; the signature
// rides on it as thoughtSignature).
func geminiParts(a stubAnswer, text string) []string {
	var parts []string
	if a.Thinking != "" {
		parts = append(parts, `{"text":`+js(a.Thinking)+`,"thought":true}`)
	}
	sig := ""
	if a.Signature != "" {
		sig = `,"thoughtSignature":` + js(a.Signature)
	}
	if a.Tool != "" {
		return append(parts, `{"functionCall":{"name":`+js(a.Tool)+`,"args":`+a.ToolArgs+`}`+sig+`}`)
	}
	return append(parts, `{"text":`+js(text)+sig+`}`)
}

func geminiResponse(model string, parts []string, finish, usage string) string {
	if finish != "" {
		finish = `,"finishReason":"` + finish + `"`
	}
	return `{"candidates":[{"content":{"role":"model","parts":[` + strings.Join(parts, ",") + `]}` + finish +
		`,"index":0}],"usageMetadata":` + usage + `,"modelVersion":` + js(model) + `,"responseId":"stub-resp"}`
}

func geminiEvents(model string, a stubAnswer) []string {
	ev := func(parts []string, final bool) string {
		finish := ""
		if final {
			finish = "STOP"
		}
		return "data: " + geminiResponse(model, parts, finish, geminiUsage(final)) + "\r\n\r\n"
	}
	if a.Tool != "" {
		return []string{ev(geminiParts(a, ""), true)}
	}
	// Text in two increments, the thought first; the signature, if any,
	// on a final empty text part as Gemini 3 sends it,
	// or on the last text increment when SignedText is set.
	h := halves(a.Text)
	var out []string
	if a.Thinking != "" {
		out = append(out, ev([]string{`{"text":` + js(a.Thinking) + `,"thought":true}`}, false))
	}
	for i, p := range h {
		part := `{"text":` + js(p) + `}`
		if i == len(h)-1 && a.SignedText && a.Signature != "" {
			part = `{"text":` + js(p) + `,"thoughtSignature":` + js(a.Signature) + `}`
		}
		out = append(out, ev([]string{part}, i == len(h)-1 && (a.Signature == "" || a.SignedText)))
	}
	if a.Signature != "" && !a.SignedText {
		out = append(out, ev([]string{`{"text":"","thoughtSignature":` + js(a.Signature) + `}`}, true))
	}
	return out
}

func geminiBody(model string, a stubAnswer) string {
	return geminiResponse(model, geminiParts(a, a.Text), "STOP", geminiUsage(true))
}
