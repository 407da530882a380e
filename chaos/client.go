package chaos

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"

	"slipstream/codec"
)

// ClientRequest returns the path, headers and body a client of dialect d
// sends to ask model for a reply, streamed or not, with client key key.
// The body is a minimal realistic request of that dialect.
func ClientRequest(d codec.Dialect, model, key string, stream bool) (path string, h http.Header, body []byte) {
	h = http.Header{"Content-Type": {"application/json"}}
	s := strconv.FormatBool(stream)
	switch d {
	case codec.DialectChat:
		h.Set("Authorization", "Bearer "+key)
		return "/v1/chat/completions", h, []byte(`{"model":` + js(model) + `,"messages":[{"role":"user","content":"hi"}],"stream":` + s + `}`)
	case codec.DialectResponses:
		h.Set("Authorization", "Bearer "+key)
		return "/v1/responses", h, []byte(`{"model":` + js(model) + `,"input":"hi","stream":` + s + `}`)
	case codec.DialectAnthropic:
		h.Set("x-api-key", key)
		h.Set("anthropic-version", "2023-06-01")
		return "/v1/messages", h, []byte(`{"model":` + js(model) + `,"max_tokens":64,"messages":[{"role":"user","content":"hi"}],"stream":` + s + `}`)
	case codec.DialectGemini:
		h.Set("x-goog-api-key", key)
		return GeminiPath(model, stream), h, []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	}
	panic(fmt.Sprintf("chaos: no request for dialect %v", d))
}

// GeminiPath is the Gemini generation path for model.
func GeminiPath(model string, stream bool) string {
	if stream {
		return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return "/v1beta/models/" + model + ":generateContent"
}

// RawRequest returns the HTTP/1.1 request bytes for path, h and body.
func RawRequest(path string, h http.Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n", path, len(body))
	for k, vs := range h {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// Dialects are the four client dialects, in a fixed order.
var Dialects = []codec.Dialect{codec.DialectChat, codec.DialectResponses, codec.DialectAnthropic, codec.DialectGemini}

// ProviderYAML returns the YAML of one provider entry (a list item, two
// spaces indented) serving models matching pattern from an upstream of
// dialect d at baseURL (the upstream's root) with credential secret.
func ProviderYAML(name string, d codec.Dialect, baseURL, pattern, secret string) string {
	kind, api := "", ""
	switch d {
	case codec.DialectChat:
		kind, api, baseURL = "openai", "chat", baseURL+"/v1"
	case codec.DialectResponses:
		kind, api, baseURL = "openai", "responses", baseURL+"/v1"
	case codec.DialectAnthropic:
		kind = "anthropic"
	case codec.DialectGemini:
		kind = "gemini"
	}
	y := "  - name: " + name + "\n    kind: " + kind + "\n"
	if api != "" {
		y += "    api: " + api + "\n"
	}
	return y + "    base_url: " + baseURL + "\n    keys: [" + js(secret) + "]\n    models: [" + js(pattern) + "]\n"
}
