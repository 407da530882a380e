package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// sseEvent is one event read from slipstream.
type sseEvent struct {
	Name string
	Data map[string]any
}

// postAnthropic posts body to slipstream's path as an Anthropic client
// with the client key; the caller closes the response's body.
func postAnthropic(t *testing.T, p *proxy, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", p.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", testKey)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// postSSE posts body to slipstream's path with the client key and reads
// the whole SSE response.
func postSSE(t *testing.T, p *proxy, path, body string) []sseEvent {
	t.Helper()
	resp := postAnthropic(t, p, path, body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: status %d", path, resp.StatusCode)
	}
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" || cur.Data != nil {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.Name = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			json.Unmarshal([]byte(strings.TrimSpace(line[5:])), &cur.Data)
		}
	}
	return out
}

// TestGeminiSignatureToAnthropic: a Gemini 3 stream that thinks, answers
// in text and carries its thoughtSignature either on a final empty text
// part (as Gemini 3 streams it, https://ai.google.dev/gemini-api/docs/thought-signatures) or on the last text increment must reach an
// Anthropic client as thinking, then the whole text in one block, with the
// text block last. Claude Code's -p result is the last content block: a
// thinking block opened after the text empties it
// (TestClaudeCode/gemini/thinking_tool), and a text block split in two
// keeps only the second half.
func TestGeminiSignatureToAnthropic(t *testing.T) {
	t.Parallel()
	for _, signedText := range []bool{false, true} {
		name := "trailing_empty_part"
		if signedText {
			name = "on_last_text_part"
		}
		t.Run(name, func(t *testing.T) { testGeminiSignatureToAnthropic(t, signedText) })
	}
}

func testGeminiSignatureToAnthropic(t *testing.T, signedText bool) {
	const text = "The answer, whole."
	s := newStub(t, dialectGemini, func(r *stubReq) stubAnswer {
		return stubAnswer{Text: text, Thinking: "Think first.", Signature: "sig-0123", SignedText: signedText}
	})
	p := startSlipstream(t, upstreamConfig("gemini", "", s.BaseURL()))
	evs := postSSE(t, p, "/v1/messages", `{"model":"gemini-e2e","max_tokens":256,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	var blocks []string
	var texts []string
	for _, e := range evs {
		switch e.Name {
		case "content_block_start":
			blocks = append(blocks, asString(asMap(e.Data["content_block"])["type"]))
			texts = append(texts, "")
		case "content_block_delta":
			if d := asMap(e.Data["delta"]); asString(d["type"]) == "text_delta" && len(texts) > 0 {
				texts[len(texts)-1] += asString(d["text"])
			}
		}
	}
	if len(blocks) == 0 || blocks[len(blocks)-1] != "text" || texts[len(texts)-1] != text {
		var seq []string
		for _, e := range evs {
			b, _ := json.Marshal(e.Data)
			seq = append(seq, e.Name+" "+string(b))
		}
		t.Errorf("blocks = %v (texts %q); want the text block last holding %q\nstream:\n%s", blocks, texts, text, strings.Join(seq, "\n"))
	}
}
