package mock

import "slipstream/codec"

// wantsJSON reports whether r asks for JSON output: a JSON Schema, or any
// JSON object (OpenAI's json_object, Gemini's application/json without a
// schema), whichever dialect's reader filled r.Format.
func wantsJSON(r *codec.Request) bool {
	return r.Format.Kind == codec.FormatJSONObject || r.Format.Kind == codec.FormatJSONSchema
}

// appendJSON appends the mock's JSON answer to a request for the output
// format f: a value that satisfies f's schema (AppendValue, whatever case
// its type names are in), or, with no schema, a small object holding the
// configured reply: {"reply":"..."}.
func (m *Mock) appendJSON(dst []byte, f *codec.Format) []byte {
	if f.Kind == codec.FormatJSONSchema && len(f.Schema) > 0 {
		return AppendValue(dst, f.Schema)
	}
	dst = append(dst, `{"reply":"`...)
	dst = append(dst, m.reply...)
	return append(dst, `"}`...)
}
