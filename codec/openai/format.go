package openai

import "slipstream/codec"

// appendFormatSchema appends the "schema" and "strict" members of a
// json_schema format (Chat response_format.json_schema, Responses
// text.format). The schema is written as standard JSON Schema
// (codec.SchemaStandard), whatever form the client used. A strict format is sent strict only when its schema meets
// OpenAI's strict rules once every object is closed
// (codec.SchemaStrictable); it is then sent closed, with
// additionalProperties: false on every object. A strict format whose
// schema does not qualify goes out as strict: false, which OpenAI accepts,
// rather than be refused.
func appendFormatSchema(dst []byte, f *codec.Format, fallback string) []byte {
	strict := f.Strict && codec.SchemaStrictable(f.Schema)
	switch {
	case strict:
		dst = append(dst, `,"schema":`...)
		dst = codec.AppendSchema(dst, f.Schema, codec.SchemaStandard|codec.SchemaClosed)
	case len(f.Schema) > 0:
		dst = append(dst, `,"schema":`...)
		dst = codec.AppendSchema(dst, f.Schema, codec.SchemaStandard)
	case fallback != "":
		dst = append(dst, `,"schema":`...)
		dst = append(dst, fallback...)
	}
	switch {
	case strict:
		dst = append(dst, `,"strict":true`...)
	case f.Strict:
		dst = append(dst, `,"strict":false`...)
	}
	return dst
}

// jsonModeAllowed reports whether r may go out with a json_object format:
// OpenAI refuses one unless the word "json" (any case) appears in the
// messages, so a request whose system and message text never says it is
// sent without the format rather than be refused.
func jsonModeAllowed(r *codec.Request) bool {
	for _, s := range r.System {
		if mentionsJSON(s) {
			return true
		}
	}
	for i := range r.Parts {
		if p := &r.Parts[i]; p.Kind == codec.PartText && mentionsJSON(p.Text) {
			return true
		}
	}
	return false
}

// mentionsJSON reports whether b holds "json" in any case.
func mentionsJSON(b []byte) bool {
	for i := 0; i+4 <= len(b); i++ {
		if b[i]|0x20 == 'j' && b[i+1]|0x20 == 's' && b[i+2]|0x20 == 'o' && b[i+3]|0x20 == 'n' {
			return true
		}
	}
	return false
}
