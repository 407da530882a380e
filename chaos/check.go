package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
	"slipstream/codec/translate"
)

// Reply is what a client received.
type Reply struct {
	// DoErr is set when no response head arrived (connection refused,
	// closed or reset before the status line).
	DoErr error
	// Status, Header and Body are the response; ReadErr is set when the
	// body ended without its framing (cut short).
	Status  int
	Header  http.Header
	Body    []byte
	ReadErr error
}

// CheckReply checks a reply to a request of dialect d, streamed or not:
// it is a well-formed success (ok true) or a well-formed failure (ok
// false, err nil) in d. A success must carry all of words. A non-streamed
// reply cut after its head counts as a failure the client sees; a stream
// must end cleanly with the dialect's terminal or error event. err says
// what is malformed.
func CheckReply(d codec.Dialect, stream bool, r *Reply, words []string) (ok bool, err error) {
	if r.DoErr != nil {
		return false, fmt.Errorf("no reply: %v", r.DoErr)
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.Status != http.StatusOK {
		if r.ReadErr != nil {
			return false, fmt.Errorf("status %d: body cut: %v", r.Status, r.ReadErr)
		}
		if ct != "application/json" {
			return false, fmt.Errorf("status %d with Content-Type %q: %q", r.Status, ct, clip(r.Body))
		}
		if err := CheckError(d, r.Body); err != nil {
			return false, fmt.Errorf("status %d: %w", r.Status, err)
		}
		return false, nil
	}
	if !stream {
		if r.ReadErr != nil {
			return false, nil //nolint:nilerr // the client sees the failure
		}
		if ct != "application/json" {
			return false, fmt.Errorf("200 with Content-Type %q: %q", ct, clip(r.Body))
		}
		if err := CheckBody(d, r.Body); err != nil {
			return false, fmt.Errorf("200: %w: %q", err, clip(r.Body))
		}
		return true, hasWords(r.Body, words)
	}
	if r.ReadErr != nil {
		return false, fmt.Errorf("stream cut without its end: %v (got %q)", r.ReadErr, clipEnd(r.Body))
	}
	if ct != "text/event-stream" {
		return false, fmt.Errorf("stream with Content-Type %q: %q", ct, clip(r.Body))
	}
	if err := translate.CheckStream(d, r.Body); err != nil {
		return false, fmt.Errorf("stream grammar: %w (stream %q)", err, clipEnd(r.Body))
	}
	if StreamFailed(d, r.Body) {
		return false, nil
	}
	return true, hasWords(r.Body, words)
}

func hasWords(body []byte, words []string) error {
	for _, w := range words {
		if !bytes.Contains(body, bytes.TrimSpace([]byte(w))) {
			return fmt.Errorf("success without %q: %q", w, clip(body))
		}
	}
	return nil
}

// CheckError checks that body is an error object of dialect d.
func CheckError(d codec.Dialect, body []byte) error {
	if !gjson.ValidBytes(body) {
		return fmt.Errorf("error body is not JSON: %q", clip(body))
	}
	e := gjson.GetBytes(body, "error")
	msg := e.Get("message")
	switch {
	case !e.IsObject() || msg.Type != gjson.String || msg.Str == "":
		return fmt.Errorf("no error.message: %q", clip(body))
	case d == codec.DialectAnthropic && (gjson.GetBytes(body, "type").Str != "error" || e.Get("type").Type != gjson.String):
		return fmt.Errorf("not an Anthropic error: %q", clip(body))
	case (d == codec.DialectChat || d == codec.DialectResponses) && e.Get("type").Type != gjson.String:
		return fmt.Errorf("not an OpenAI error: %q", clip(body))
	case d == codec.DialectGemini && (e.Get("code").Type != gjson.Number || e.Get("status").Type != gjson.String):
		return fmt.Errorf("not a Google error: %q", clip(body))
	}
	return nil
}

// CheckBody checks that body is a complete non-streamed reply of dialect d.
func CheckBody(d codec.Dialect, body []byte) error {
	if !gjson.ValidBytes(body) {
		return errors.New("body is not JSON")
	}
	g := func(path string) gjson.Result { return gjson.GetBytes(body, path) }
	switch d {
	case codec.DialectChat:
		if g("object").Str != "chat.completion" || !g("choices.0.message").IsObject() {
			return errors.New("not a chat.completion")
		}
	case codec.DialectResponses:
		if g("object").Str != "response" || g("status").Str != "completed" || !g("output").IsArray() {
			return errors.New("not a completed response")
		}
	case codec.DialectAnthropic:
		if g("type").Str != "message" || !g("content").IsArray() || g("stop_reason").Type != gjson.String {
			return errors.New("not a message")
		}
	case codec.DialectGemini:
		if !g("candidates.0.content").IsObject() || g("candidates.0.finishReason").Type != gjson.String {
			return errors.New("not a GenerateContentResponse")
		}
	}
	return nil
}

// StreamFailed reports whether a grammatical stream of dialect d ended
// with its error event rather than its success terminal.
func StreamFailed(d codec.Dialect, stream []byte) bool {
	var name, last []byte
	_, _ = sse.Walk(stream, func(_ int, ev *sse.Event) error {
		name = append(name[:0], ev.Name...)
		last = append(last[:0], ev.Data...)
		return nil
	})
	switch d {
	case codec.DialectAnthropic:
		return string(name) != "message_stop"
	case codec.DialectChat:
		return string(last) != "[DONE]"
	case codec.DialectResponses:
		return string(name) != "response.completed"
	}
	return gjson.GetBytes(last, "error").Exists() || len(last) == 0
}

func clip(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "..."...)
	}
	return b
}

func clipEnd(b []byte) []byte {
	if len(b) > 600 {
		return append([]byte("..."), b[len(b)-600:]...)
	}
	return b
}
