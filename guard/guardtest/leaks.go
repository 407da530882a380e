package guardtest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Leaks returns the secrets whose value is still readable in the JSON
// body: in any string of it once decoded, or of a JSON document inside such
// a string (OpenAI tool-call arguments). A multi-line value leaks when any
// of its lines of 16 characters or more is readable (PEM BEGIN/END lines
// excepted: two keys share them), so a partial redaction is a leak. An
// error means body is not valid JSON (a rewrite that broke it).
func Leaks(body []byte, secrets []Secret) ([]Secret, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("cannot decode the body: %w", err)
	}
	var b strings.Builder
	collectStrings(&b, v)
	text := b.String()
	var out []Secret
	for _, s := range secrets {
		for _, c := range valueChunks(s.Value) {
			if strings.Contains(text, c) {
				out = append(out, s)
				break
			}
		}
	}
	return out, nil
}

// collectStrings writes every string below v, each followed by a NUL.
func collectStrings(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		b.WriteString(x)
		b.WriteByte(0)
		if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			var inner any
			if json.Unmarshal([]byte(t), &inner) == nil {
				collectStrings(b, inner)
			}
		}
	case []any:
		for _, e := range x {
			collectStrings(b, e)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(b, e)
		}
	}
}

// valueChunks returns what must not be readable of a value: the value, or
// for a multi-line one each line of 16 characters or more (lines split at
// line breaks and at the two characters \n).
func valueChunks(v string) []string {
	if !strings.Contains(v, "\n") && !strings.Contains(v, `\n`) {
		return []string{v}
	}
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(v, `\n`, "\n"), "\n") {
		if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}
