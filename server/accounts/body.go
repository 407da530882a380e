package accounts

import (
	"bytes"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"slipstream/codec"
	"slipstream/codec/translate"
	"slipstream/server/provider"
)

// codexDropped are request members the ChatGPT backend refuses; a
// translated request may carry them (its client's sampling settings).
var codexDropped = [...]string{"max_output_tokens", "max_completion_tokens", "temperature", "top_p", "prompt_cache_retention", "safety_identifier", "stream_options"}

// codexBody adapts a codex-account request to what the ChatGPT backend
// requires: "stream": true (a non-streamed client is answered by
// aggregating the stream), "store": false and "instructions" (empty when
// the client put its instructions in the input, as Codex does), and
// without the sampling members the backend refuses. The body is copied
// once when anything changes; a request Codex sent usually goes as is.
func codexBody(c provider.Call) (int, string) {
	if !c.Streamed() {
		c.Aggregate()
	}
	body, ok := c.UpBody()
	if !ok {
		return fasthttp.StatusInternalServerError, "cannot read the request body back"
	}
	var add []byte
	if !gjson.GetBytes(body, "store").Exists() {
		add = append(add, `"store":false,`...)
	}
	if !gjson.GetBytes(body, "instructions").Exists() {
		add = append(add, `"instructions":"",`...)
	}
	stream := gjson.GetBytes(body, "stream")
	if !stream.Exists() {
		add = append(add, `"stream":true,`...)
	}
	drop := false
	for _, k := range codexDropped {
		drop = drop || gjson.GetBytes(body, k).Exists()
	}
	if len(add) == 0 && stream.Raw == "true" && !drop {
		return 0, ""
	}
	if !codec.IsObject(bytes.TrimLeft(body, " \t\r\n")) {
		return fasthttp.StatusBadRequest, "the request body is not a JSON object"
	}
	b := c.BodyBuffer(len(body) + len(add))
	c.SetUpBody(appendCodexBody(append(b[:0], '{'), add, body))
	return 0, ""
}

// appendCodexBody appends to dst (which holds "{") the members add, then
// body's members but the dropped ones, with stream set to true, and the
// closing brace: one pass over the body, its values copied as they are.
func appendCodexBody(dst, add, body []byte) []byte {
	dst = append(dst, add...)
	m := codec.ObjectMembers(bytes.TrimLeft(body, " \t\r\n"))
	for {
		k, v, ok := m.Next()
		if !ok {
			break
		}
		if dropped(k) {
			continue
		}
		if string(k) == "stream" {
			v = []byte("true")
		}
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, '"', ':')
		dst = append(dst, v...)
		dst = append(dst, ',')
	}
	if dst[len(dst)-1] == ',' {
		dst = dst[:len(dst)-1]
	}
	return append(dst, '}')
}

func dropped(k []byte) bool {
	for _, d := range codexDropped {
		if string(k) == d {
			return true
		}
	}
	return false
}

// Google accounts (gemini-account) are served by the Code Assist API:
// POST {base_url}/v1internal:generateContent (or
// :streamGenerateContent?alt=sse) with the Gemini request wrapped in an
// envelope {model, project, request}, and every answer (each stream
// event) wrapped as {"response": <Gemini response>, ...}. The request is
// wrapped once here; the server unwraps the answers as they pass
// (Call.Unwrap), so clients see plain Gemini.

// codeAssistBody wraps the built Gemini request in the Code Assist
// envelope and points the request at the v1internal method.
func codeAssistBody(c provider.Call) (int, string) {
	tok := token(c)
	if tok == nil {
		return 0, "" // unsigned: the upstream's 401 fails over
	}
	if tok.ProjectID == "" {
		return fasthttp.StatusBadRequest, "account " + c.Credential().Name + " has no Code Assist project; log in again (slipstream login gemini) so it is discovered"
	}
	body, ok := c.UpBody()
	if !ok {
		return fasthttp.StatusInternalServerError, "cannot read the request body back"
	}
	model := c.UpModel()
	b := c.BodyBuffer(len(body) + len(model) + len(tok.ProjectID) + 64)
	b = translate.AppendCodeAssistRequest(b[:0], model, tok.ProjectID, body)
	c.SetUpBody(b)
	if c.Streamed() {
		c.SetPath("/v1internal:streamGenerateContent?alt=sse")
	} else {
		c.SetPath("/v1internal:generateContent")
	}
	return 0, ""
}
