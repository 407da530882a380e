package gemini

import (
	"bytes"

	"github.com/tidwall/gjson"

	"slipstream/codec"
	"slipstream/pool"
)

// tools reads functionDeclarations; other tool kinds are dropped.
func (rr *reqReader) tools(v gjson.Result) {
	v.ForEach(func(_, t gjson.Result) bool {
		getEither(t, "functionDeclarations", "function_declarations").ForEach(func(_, d gjson.Result) bool {
			rr.declaration(d)
			return true
		})
		return true
	})
}

// declaration reads one FunctionDeclaration.
func (rr *reqReader) declaration(d gjson.Result) {
	var t codec.Tool
	var params, jsonSchema []byte
	m := codec.ObjectMembers(codec.Raw(d))
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "name":
			t.Name = codec.StrContent(v)
		case "description":
			t.Description = codec.StrContent(v)
		case "parameters":
			params = v
		case "parametersJsonSchema", "parameters_json_schema":
			jsonSchema = v
		}
	}
	switch {
	case codec.IsObject(jsonSchema):
		t.Schema = rr.standardSchema(jsonSchema)
	case codec.IsObject(params):
		t.Schema = rr.standardSchema(params)
	}
	rr.r.Tools = append(rr.r.Tools, t)
}

// standardSchema returns schema, or a copy in r.Scratch rewritten as
// standard JSON Schema (codec.SchemaStandard: lower-case type names,
// nullable folded into the type, Gemini-only keys dropped) when it may
// need that. The copy is never longer than schema (see scratchNeed).
func (rr *reqReader) standardSchema(schema []byte) []byte {
	if !codec.SchemaNeedsStandard(schema) {
		return schema
	}
	s := rr.r.Scratch
	start := len(s)
	s = codec.AppendSchema(s, schema, codec.SchemaStandard)
	rr.r.Scratch = s
	return s[start:len(s):len(s)]
}

// readToolConfig maps toolConfig.functionCallingConfig (docs/TRANSLATION.md, tool_choice).
func readToolConfig(r *codec.Request, v gjson.Result) {
	fc := getEither(v, "functionCallingConfig", "function_calling_config")
	mode := fc.Get("mode").Str
	allowed := getEither(fc, "allowedFunctionNames", "allowed_function_names")
	switch {
	case equalFold(mode, "AUTO"), equalFold(mode, "VALIDATED"):
		r.ToolChoice.Mode = codec.ToolChoiceAuto
	case equalFold(mode, "NONE"):
		r.ToolChoice.Mode = codec.ToolChoiceNone
	case equalFold(mode, "ANY"):
		r.ToolChoice.Mode = codec.ToolChoiceAny
		if n := allowed.Get("#").Int(); n == 1 {
			r.ToolChoice = codec.ToolChoice{Mode: codec.ToolChoiceTool, Name: codec.Content(allowed.Get("0"))}
		}
	}
}

// formatName is the schema name given to other dialects, which need one.
var formatName = pool.S2B("response")

// generationConfig reads sampling, limits, structured output and thinking.
func (rr *reqReader) generationConfig(v gjson.Result) error {
	r := rr.r
	var mime, schema, openAPISchema gjson.Result
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "maxOutputTokens", "max_output_tokens":
			r.MaxTokens = v.Int()
		case "temperature":
			r.Temperature = number(v)
		case "topP", "top_p":
			r.TopP = number(v)
		case "topK", "top_k":
			r.TopK = number(v)
		case "candidateCount", "candidate_count":
			r.N = v.Int()
		case "stopSequences", "stop_sequences":
			v.ForEach(func(_, s gjson.Result) bool {
				r.Stop = append(r.Stop, codec.Content(s))
				return true
			})
		case "responseMimeType", "response_mime_type":
			mime = v
		case "responseJsonSchema", "response_json_schema", "_responseJsonSchema":
			schema = v
		case "responseSchema", "response_schema":
			openAPISchema = v
		case "thinkingConfig", "thinking_config":
			readThinking(&r.Reasoning, v)
		}
		return true
	})
	rr.format(mime, schema, openAPISchema)
	return nil
}

// number returns v's raw JSON when v is a number, else nil.
func number(v gjson.Result) []byte {
	if v.Type != gjson.Number {
		return nil
	}
	return codec.Raw(v)
}

// format maps responseMimeType and a response schema to r.Format. Either
// schema form becomes standard JSON Schema (Gemini CLI writes upper-case
// type names even in responseJsonSchema). Gemini always holds the answer
// to the schema, so the format is strict.
func (rr *reqReader) format(mime, schema, openAPISchema gjson.Result) {
	f := &rr.r.Format
	if !schema.IsObject() {
		schema = openAPISchema
	}
	switch {
	case schema.IsObject():
		*f = codec.Format{Kind: codec.FormatJSONSchema, Name: formatName, Schema: rr.standardSchema(codec.Raw(schema)), Strict: true}
	case mime.Str == "application/json":
		f.Kind = codec.FormatJSONObject
	case mime.Str == "text/plain":
		f.Kind = codec.FormatText
	}
}

// readThinking maps thinkingConfig: thinkingBudget (kept as Budget, and
// bucketed into an effort), thinkingLevel, includeThoughts.
func readThinking(rs *codec.Reasoning, v gjson.Result) {
	v.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "thinkingBudget", "thinking_budget":
			b := v.Int()
			switch {
			case b == 0:
				rs.Effort = codec.EffortNone
			case b < 0:
				rs.Budget = -1
			default:
				rs.Budget = b
				rs.Effort = effortForBudget(b)
			}
		case "thinkingLevel", "thinking_level":
			if e := effortForLevel(v.Str); e != codec.EffortUnset && rs.Budget == 0 {
				rs.Effort = e
			}
		case "includeThoughts", "include_thoughts":
			rs.Summary = v.Bool()
		}
		return true
	})
}

// effortForBudget is codec.EffortForBudget capped at high: Gemini has no
// level above it.
func effortForBudget(b int64) codec.Effort { return min(codec.EffortForBudget(b), codec.EffortHigh) }

func effortForLevel(s string) codec.Effort {
	switch {
	case equalFold(s, "MINIMAL"):
		return codec.EffortMinimal
	case equalFold(s, "LOW"):
		return codec.EffortLow
	case equalFold(s, "MEDIUM"):
		return codec.EffortMedium
	case equalFold(s, "HIGH"):
		return codec.EffortHigh
	}
	return codec.EffortUnset
}

// needsScratch reports whether body may hold anything DecodeRequest must
// produce bytes for (minted ids, compacted responses, lowercased schemas).
func needsScratch(body []byte) bool {
	return bytes.Contains(body, []byte("unction")) || bytes.Contains(body, []byte("esponseSchema")) ||
		bytes.Contains(body, []byte("esponse_schema")) || bytes.Contains(body, []byte("esponseJsonSchema")) ||
		bytes.Contains(body, []byte("esponse_json_schema"))
}

// maxIDLen bounds a minted id: "call_" and an int64.
const maxIDLen = 5 + 20

// scratchNeed bounds the Scratch bytes DecodeRequest will append, so that
// Scratch is reserved once and never moves. It walks the request without
// copying; results that are one string (the common case) need nothing.
func scratchNeed(top *topFields) int {
	n := 0
	top.contents.ForEach(func(_, c gjson.Result) bool {
		c.Get("parts").ForEach(func(_, p gjson.Result) bool {
			n += partScratch(p)
			return true
		})
		return true
	})
	top.tools.ForEach(func(_, t gjson.Result) bool {
		getEither(t, "functionDeclarations", "function_declarations").ForEach(func(_, d gjson.Result) bool {
			n += schemaScratch(d.Get("parameters")) + schemaScratch(getEither(d, "parametersJsonSchema", "parameters_json_schema"))
			return true
		})
		return true
	})
	n += schemaScratch(getEither(top.genConfig, "responseSchema", "response_schema"))
	n += schemaScratch(getEither(top.genConfig, "responseJsonSchema", "response_json_schema"))
	return n + schemaScratch(top.genConfig.Get("_responseJsonSchema"))
}

func partScratch(p gjson.Result) int {
	var pf partFields
	pf.read(codec.Raw(p))
	switch {
	case pf.call != nil:
		return maxIDLen
	case pf.resp == nil:
		return 0
	}
	resp := member(pf.resp, "response", "response")
	if inner, _ := unwrapResponse(resp); codec.StrContent(inner) == nil {
		return maxIDLen + 2*len(resp)
	}
	return maxIDLen
}

func schemaScratch(v gjson.Result) int {
	if v.IsObject() && codec.SchemaNeedsStandard(codec.Raw(v)) {
		return len(v.Raw)
	}
	return 0
}
