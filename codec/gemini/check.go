package gemini

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/codec/sse"
)

// CheckStream validates a whole Gemini SSE stream as a client receives it
// (https://ai.google.dev/api/generate-content): unnamed data events, each a GenerateContentResponse
// with a candidates array of objects whose content has role model and
// well-formed parts (one of text, functionCall with a name and an object
// args, inlineData, fileData; thought a bool, thoughtSignature a string);
// one modelVersion and responseId throughout; the last event, and only it,
// has a finishReason and an integer usageMetadata whose totalTokenCount is
// the sum of its parts; or the stream ends with one error object. The
// stream must end with a blank line. It returns the first violation with
// its event index.
func CheckStream(stream []byte) error {
	if !bytes.HasSuffix(stream, []byte("\n\n")) && !bytes.HasSuffix(stream, []byte("\r\r")) {
		return errors.New("stream does not end with a blank line")
	}
	var c checker
	_, err := sse.Walk(stream, func(i int, ev *sse.Event) error {
		if err := c.event(ev.Name, ev.Data); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case c.n == 0:
		return errors.New("stream has no events")
	case !c.final:
		return errors.New("stream ends without a finishReason or an error")
	}
	return nil
}

// checker holds the state CheckStream carries between events.
type checker struct {
	n             int
	final         bool // a finishReason or error event was seen
	model, respID string
}

func (c *checker) event(name, data []byte) error {
	c.n++
	if c.final {
		return errors.New("event after the final event")
	}
	if name != nil {
		return fmt.Errorf("unexpected event name %q", name)
	}
	if !gjson.ValidBytes(data) || !gjson.ParseBytes(data).IsObject() {
		return fmt.Errorf("data is not a JSON object: %.80q", data)
	}
	root := gjson.ParseBytes(data)
	if e := root.Get("error"); e.Exists() {
		c.final = true
		return checkError(e)
	}
	if err := c.ids(root); err != nil {
		return err
	}
	cands := root.Get("candidates")
	if !cands.IsArray() || len(cands.Array()) == 0 {
		return errors.New("candidates must be a non-empty array")
	}
	for _, cand := range cands.Array() {
		if err := c.candidate(cand); err != nil {
			return err
		}
	}
	if c.final {
		return checkUsage(root.Get("usageMetadata"))
	}
	return nil
}

// ids checks that modelVersion and responseId are strings that stay the same.
func (c *checker) ids(root gjson.Result) error {
	m, id := root.Get("modelVersion"), root.Get("responseId")
	if m.Type != gjson.String || id.Type != gjson.String {
		return errors.New("modelVersion and responseId must be strings")
	}
	if c.n == 1 {
		c.model, c.respID = strings.Clone(m.Str), strings.Clone(id.Str) // copies: the reader reuses its buffer
	} else if m.Str != c.model || id.Str != c.respID {
		return fmt.Errorf("modelVersion/responseId changed to %q/%q", m.Str, id.Str)
	}
	return nil
}

func (c *checker) candidate(cand gjson.Result) error {
	if !cand.IsObject() {
		return errors.New("candidate is not an object")
	}
	if idx := cand.Get("index"); idx.Exists() && idx.Type != gjson.Number {
		return errors.New("candidate index must be a number")
	}
	if fr := cand.Get("finishReason"); fr.Exists() {
		if fr.Type != gjson.String || fr.Str == "" {
			return errors.New("finishReason must be a non-empty string")
		}
		c.final = true
	}
	content := cand.Get("content")
	if !content.Exists() {
		return nil
	}
	if content.Get("role").Str != "model" {
		return errors.New(`content.role must be "model"`)
	}
	parts := content.Get("parts")
	if !parts.IsArray() {
		return errors.New("content.parts must be an array")
	}
	for j, p := range parts.Array() {
		if err := checkPart(p); err != nil {
			return fmt.Errorf("parts[%d]: %w", j, err)
		}
	}
	return nil
}

func checkPart(p gjson.Result) error {
	if !p.IsObject() {
		return errors.New("not an object")
	}
	data := 0
	var err error
	p.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "text":
			data++
			if v.Type != gjson.String {
				err = errors.New("text must be a string")
			}
		case "functionCall":
			data++
			err = checkCall(v)
		case "inlineData", "fileData", "executableCode", "codeExecutionResult", "functionResponse":
			data++
		case "thought":
			if v.Type != gjson.True && v.Type != gjson.False {
				err = errors.New("thought must be a bool")
			}
		case "thoughtSignature":
			if v.Type != gjson.String {
				err = errors.New("thoughtSignature must be a string")
			}
		default:
			err = fmt.Errorf("unknown member %q", k.Str)
		}
		return err == nil
	})
	if err == nil && data != 1 {
		err = fmt.Errorf("part holds %d data members, want 1", data)
	}
	return err
}

func checkCall(v gjson.Result) error {
	if name := v.Get("name"); name.Type != gjson.String || name.Str == "" {
		return errors.New("functionCall.name must be a non-empty string")
	}
	if args := v.Get("args"); args.Exists() && !args.IsObject() {
		return errors.New("functionCall.args must be an object")
	}
	if id := v.Get("id"); id.Exists() && id.Type != gjson.String {
		return errors.New("functionCall.id must be a string")
	}
	return nil
}

// checkUsage checks the final usageMetadata.
func checkUsage(u gjson.Result) error {
	if !u.IsObject() {
		return errors.New("final event lacks usageMetadata")
	}
	var sum int64
	for _, k := range [...]string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "toolUsePromptTokenCount", "cachedContentTokenCount", "totalTokenCount"} {
		v := u.Get(k)
		if !v.Exists() {
			if k == "promptTokenCount" || k == "totalTokenCount" {
				return fmt.Errorf("usageMetadata.%s missing", k)
			}
			continue
		}
		if v.Type != gjson.Number || bytes.ContainsAny([]byte(v.Raw), ".eE-") {
			return fmt.Errorf("usageMetadata.%s must be a non-negative integer", k)
		}
		if k != "totalTokenCount" && k != "cachedContentTokenCount" {
			sum += v.Int()
		}
	}
	if total := u.Get("totalTokenCount").Int(); total != sum {
		return fmt.Errorf("usageMetadata.totalTokenCount %d != sum of counts %d", total, sum)
	}
	return nil
}

// checkError checks an in-band error object.
func checkError(e gjson.Result) error {
	if e.Get("code").Type != gjson.Number || e.Get("message").Type != gjson.String || e.Get("status").Type != gjson.String {
		return errors.New("error needs a numeric code, a message and a status")
	}
	return nil
}

// CheckArrayStream validates a whole JSON-array stream (:streamGenerateContent
// without alt=sse) as a client receives it: one valid JSON array framed as
// Google frames it ("[" then the first element, ",\r\n" before each next
// element, "]" last; whitespace, such as keep-alive newlines, allowed
// between them), whose elements follow CheckStream's rules for events.
func CheckArrayStream(stream []byte) error {
	if !gjson.ValidBytes(stream) || !gjson.ParseBytes(stream).IsArray() {
		return fmt.Errorf("stream is not one JSON array: %.120q", stream)
	}
	var c checker
	rest := bytes.TrimLeft(stream, " \t\r\n")[1:] // after '['
	for i := 0; ; i++ {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if rest[0] == ']' {
			if i == 0 {
				return errors.New("stream has no elements")
			}
			break
		}
		end := codec.ValueEnd(rest, 0)
		if end <= 0 {
			return fmt.Errorf("element %d: malformed: %.40q", i, rest)
		}
		raw := rest[:end]
		if err := c.event(nil, raw); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		rest = rest[len(raw):]
		if sep, ok := bytes.CutPrefix(rest, []byte(",\r\n")); ok {
			rest = sep
		} else if r := bytes.TrimLeft(rest, " \t\r\n"); len(r) == 0 || r[0] != ']' {
			return fmt.Errorf("element %d: not followed by \",\\r\\n\" or \"]\": %.40q", i, rest)
		}
	}
	if !c.final {
		return errors.New("stream ends without a finishReason or an error")
	}
	return nil
}
