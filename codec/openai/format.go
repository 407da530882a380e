package openai

import "slipstream/codec"

// appendFormatSchema appends the "schema" and "strict" members of a
// json_schema format (Chat response_format.json_schema, Responses
// text.format). A strict format is sent strict only when its schema meets
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
		dst = codec.AppendSchema(dst, f.Schema, codec.SchemaClosed)
	case len(f.Schema) > 0:
		dst = append(dst, `,"schema":`...)
		dst = append(dst, f.Schema...)
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
