package gemini

import (
	"bytes"

	"slipstream/codec"
)

// genWriter writes generationConfig members, opening the object lazily.
type genWriter struct {
	dst  []byte
	open bool
}

func (g *genWriter) key(name string) {
	if g.open {
		g.dst = append(g.dst, ',')
	} else {
		g.dst = append(g.dst, `,"generationConfig":{`...)
		g.open = true
	}
	g.dst = append(g.dst, '"')
	g.dst = append(g.dst, name...)
	g.dst = append(g.dst, `":`...)
}

func (g *genWriter) raw(name string, v []byte) {
	if len(v) > 0 {
		g.key(name)
		g.dst = append(g.dst, v...)
	}
}

// generationConfig writes limits, sampling, stop sequences, structured
// output and thinking; nothing when none is set.
func (w *reqWriter) generationConfig() {
	r := w.r
	g := genWriter{dst: w.dst}
	if r.MaxTokens > 0 {
		g.key("maxOutputTokens")
		g.dst = codec.AppendInt(g.dst, r.MaxTokens)
	}
	g.raw("temperature", r.Temperature)
	g.raw("topP", r.TopP)
	g.raw("topK", r.TopK)
	if len(r.Stop) > 0 {
		g.key("stopSequences")
		g.dst = append(g.dst, '[')
		for i, s := range r.Stop {
			if i > 0 {
				g.dst = append(g.dst, ',')
			}
			g.dst = codec.AppendString(g.dst, s)
		}
		g.dst = append(g.dst, ']')
	}
	switch r.Format.Kind {
	case codec.FormatJSONObject:
		g.key("responseMimeType")
		g.dst = append(g.dst, `"application/json"`...)
	case codec.FormatJSONSchema:
		g.key("responseMimeType")
		g.dst = append(g.dst, `"application/json"`...)
		if len(r.Format.Schema) > 0 {
			// Standard JSON Schema, as responseJsonSchema takes it,
			// whatever form the client used.
			g.key("responseJsonSchema")
			g.dst = codec.AppendSchema(g.dst, r.Format.Schema, codec.SchemaStandard)
		}
	}
	g.thinking(&r.Reasoning, w.levels)
	if g.open {
		g.dst = append(g.dst, '}')
	}
	w.dst = g.dst
}

// thinking writes thinkingConfig from the budget, else the effort
// (docs/TRANSLATION.md, reasoning), with includeThoughts when a summary is wanted.
func (g *genWriter) thinking(rs *codec.Reasoning, levels bool) {
	if levels && rs.Budget == 0 && rs.Effort != codec.EffortUnset {
		g.thinkingLevel(rs)
		return
	}
	budget, ok := thinkingBudget(rs)
	if !ok && !rs.Summary {
		return
	}
	g.key("thinkingConfig")
	g.dst = append(g.dst, '{')
	if ok {
		g.dst = append(g.dst, `"thinkingBudget":`...)
		g.dst = codec.AppendInt(g.dst, budget)
	}
	if rs.Summary && (!ok || budget != 0) {
		if ok {
			g.dst = append(g.dst, ',')
		}
		g.dst = append(g.dst, `"includeThoughts":true`...)
	}
	g.dst = append(g.dst, '}')
}

// thinkingLevel writes thinkingConfig with the thinkingLevel of an effort.
// Only LOW and HIGH are written, the two levels every Gemini 3 model
// accepts: efforts up to low are LOW (Gemini 3 cannot turn thinking off),
// medium and above HIGH.
func (g *genWriter) thinkingLevel(rs *codec.Reasoning) {
	g.key("thinkingConfig")
	if rs.Effort <= codec.EffortLow {
		g.dst = append(g.dst, `{"thinkingLevel":"LOW"`...)
	} else {
		g.dst = append(g.dst, `{"thinkingLevel":"HIGH"`...)
	}
	if rs.Summary {
		g.dst = append(g.dst, `,"includeThoughts":true`...)
	}
	g.dst = append(g.dst, '}')
}

// thinkingLevelModel reports whether model (escaped, possibly prefixed
// "models/") is a Gemini 3 model, which takes thinkingLevel; earlier
// models only take thinkingBudget.
func thinkingLevelModel(model []byte) bool {
	model = bytes.TrimPrefix(model, []byte("models/"))
	return bytes.HasPrefix(model, []byte("gemini-3"))
}

// thinkingBudget returns the thinkingBudget for rs and whether one is set.
func thinkingBudget(rs *codec.Reasoning) (int64, bool) {
	if rs.Budget != 0 {
		return rs.Budget, true
	}
	switch rs.Effort {
	case codec.EffortNone, codec.EffortMinimal:
		return 0, true
	case codec.EffortLow:
		return codec.BudgetLow, true
	case codec.EffortMedium:
		return codec.BudgetMedium, true
	case codec.EffortHigh, codec.EffortXHigh, codec.EffortMax:
		return codec.BudgetHigh, true
	}
	return 0, false
}
