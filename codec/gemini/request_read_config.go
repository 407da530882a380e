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
		t.Schema = jsonSchema
	case codec.IsObject(params):
		t.Schema = rr.lowerTypes(params)
	}
	rr.r.Tools = append(rr.r.Tools, t)
}

// lowerTypes returns schema, or a copy in r.Scratch with OpenAPI type names
// lowercased when it has any in upper case.
func (rr *reqReader) lowerTypes(schema []byte) []byte {
	if !lowerTypeNames(schema, false) {
		return schema
	}
	s := rr.r.Scratch
	start := len(s)
	s = append(s, schema...)
	lowerTypeNames(s[start:], true)
	rr.r.Scratch = s
	return s[start:len(s):len(s)]
}

// lowerTypeNames finds string values of "type" members in JSON b that hold
// upper-case letters and, when write is set, lowercases them in place. It
// reports whether it found any.
func lowerTypeNames(b []byte, write bool) bool {
	found := false
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j := codec.StringEnd(b, i)
		if string(b[i+1:j]) == "type" {
			if k := codec.SkipWS(b, j+1); k < len(b) && b[k] == ':' {
				if k = codec.SkipWS(b, k+1); k < len(b) && b[k] == '"' {
					e := codec.StringEnd(b, k)
					found = lowerASCII(b[k+1:e], write) || found
					j = e
				}
			}
		}
		i = j
	}
	return found
}

func lowerASCII(b []byte, write bool) bool {
	found := false
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			found = true
			if write {
				b[i] = c + 'a' - 'A'
			}
		}
	}
	return found
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

// format maps responseMimeType and a response schema to r.Format.
func (rr *reqReader) format(mime, schema, openAPISchema gjson.Result) {
	f := &rr.r.Format
	switch {
	case schema.IsObject():
		*f = codec.Format{Kind: codec.FormatJSONSchema, Name: formatName, Schema: codec.Raw(schema)}
	case openAPISchema.IsObject():
		*f = codec.Format{Kind: codec.FormatJSONSchema, Name: formatName, Schema: rr.lowerTypes(codec.Raw(openAPISchema))}
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
		bytes.Contains(body, []byte("esponse_schema"))
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
			n += schemaScratch(d.Get("parameters"))
			return true
		})
		return true
	})
	return n + schemaScratch(getEither(top.genConfig, "responseSchema", "response_schema"))
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
	if _, _, simple := simpleResponse(resp); !simple {
		return maxIDLen + 2*len(resp)
	}
	return maxIDLen
}

func schemaScratch(v gjson.Result) int {
	if v.IsObject() && lowerTypeNames(codec.Raw(v), false) {
		return len(v.Raw)
	}
	return 0
}
