package codec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestAppendSchemaStandard(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got := AppendSchema(nil, []byte(in), SchemaStandard)
		if string(got) != want {
			t.Errorf("AppendSchema(%s)\n got %s\nwant %s", in, got, want)
		}
		if len(got) > len(in) {
			t.Errorf("AppendSchema(%s): output longer than input (%d > %d)", in, len(got), len(in))
		}
	}
	// Root only.
	f(`{"type":"STRING"}`, `{"type":"string"}`)
	f(`{"type": "object"}`, `{"type":"object"}`)
	// Gemini CLI's routing schema: depth 2, propertyOrdering dropped.
	f(`{"type":"OBJECT","properties":{"reasoning":{"type":"STRING","description":"Why"},"model_choice":{"type":"STRING","enum":["flash","pro"]}},"required":["reasoning","model_choice"],"propertyOrdering":["reasoning","model_choice"]}`,
		`{"type":"object","properties":{"reasoning":{"type":"string","description":"Why"},"model_choice":{"type":"string","enum":["flash","pro"]}},"required":["reasoning","model_choice"]}`)
	// Depth 4: array of objects with a nullable integer and an OpenAPI format.
	f(`{"type":"OBJECT","properties":{"steps":{"type":"ARRAY","items":{"type":"OBJECT","properties":{"n":{"type":"INTEGER","format":"int32","nullable":true},"ok":{"type":"BOOLEAN"}}}}}}`,
		`{"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"n":{"type":["integer","null"]},"ok":{"type":"boolean"}}}}}}`)
	// nullable before type, enum gains null.
	f(`{"nullable":true,"type":"STRING","enum":["a","b"]}`, `{"type":["string","null"],"enum":["a","b",null]}`)
	// anyOf, $defs and a standard format kept.
	f(`{"anyOf":[{"type":"NUMBER"},{"type":"STRING","format":"date-time"}],"$defs":{"x":{"type":"OBJECT"}}}`,
		`{"anyOf":[{"type":"number"},{"type":"string","format":"date-time"}],"$defs":{"x":{"type":"object"}}}`)
	// Pretty-printed input comes out compact, leaves included.
	f("{\n  \"type\": \"STRING\",\n  \"nullable\": true,\n  \"enum\": [\n    \"a\",\n    \"b\"\n  ]\n}", `{"type":["string","null"],"enum":["a","b",null]}`)
	// nullable: false just goes; type arrays lowercased.
	f(`{"type":["STRING","NULL"],"nullable":false}`, `{"type":["string","null"]}`)
	// A property named "type" is a property, not a type.
	f(`{"type":"OBJECT","properties":{"type":{"type":"STRING"}}}`, `{"type":"object","properties":{"type":{"type":"string"}}}`)
}

func TestAppendSchemaClosed(t *testing.T) {
	f := func(in string, o SchemaOpts, want string) {
		t.Helper()
		got := AppendSchema(nil, []byte(in), o)
		if string(got) != want {
			t.Errorf("AppendSchema(%s, %d)\n got %s\nwant %s", in, o, got, want)
		}
	}
	f(`{"type":"object","properties":{"a":{"type":"string"}}}`, SchemaClosed,
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)
	f(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"object","properties":{}}}}}}}`, SchemaClosed,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"object","properties":{},"additionalProperties":false}},"additionalProperties":false}}},"additionalProperties":false}`)
	f(`{"type":"object","additionalProperties":true}`, SchemaClosed, `{"type":"object","additionalProperties":true}`)
	f(`{"anyOf":[{"type":"object","properties":{}},{"type":"null"}]}`, SchemaClosed,
		`{"anyOf":[{"type":"object","properties":{},"additionalProperties":false},{"type":"null"}]}`)
	f(`{"type":"OBJECT","properties":{"n":{"type":"INTEGER","minimum":1,"maximum":9},"s":{"type":"ARRAY","minItems":3,"items":{"type":"STRING","maxLength":5}}}}`,
		SchemaStandard|SchemaAnthropic,
		`{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`)
}

func TestAppendSchemaAnthropic(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := AppendSchema(nil, []byte(in), SchemaAnthropic); string(got) != want {
			t.Errorf("AppendSchema(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	// Type lists become anyOf; additionalProperties other than false closes.
	f(`{"type":"object","properties":{"a":{"type":["string","null"],"description":"d"}},"additionalProperties":true}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"d"}},"additionalProperties":false}`)
	f(`{"type":"object","additionalProperties":{"type":"string"}}`, `{"type":"object","additionalProperties":false}`)
	// Formats outside Anthropic's list and bounds go; minItems 1 stays.
	f(`{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","format":"regex","pattern":"^a"}}`,
		`{"type":"array","minItems":1,"items":{"type":"string","pattern":"^a"}}`)
	f(`{"type":"string","format":"date-time"}`, `{"type":"string","format":"date-time"}`)
	// Gemini's nullable, rewritten in the same pass, becomes anyOf too.
	f2 := func(in, want string) {
		t.Helper()
		if got := AppendSchema(nil, []byte(in), SchemaStandard|SchemaAnthropic); string(got) != want {
			t.Errorf("AppendSchema(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	f2(`{"type":"STRING","nullable":true,"enum":["a"]}`, `{"anyOf":[{"type":"string"},{"type":"null"}],"enum":["a",null]}`)
	f2(`{"type":["STRING","NULL"]}`, `{"anyOf":[{"type":"string"},{"type":"null"}]}`)
	f2(`{"type":"STRING"}`, `{"type":"string"}`)
	// A type list beside an anyOf stays a list.
	f(`{"type":["object","null"],"anyOf":[{"required":["a"]}]}`, `{"type":["object","null"],"anyOf":[{"required":["a"]}]}`)
}

func TestSchemaStrictable(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := SchemaStrictable([]byte(in)); got != want {
			t.Errorf("SchemaStrictable(%s) = %v, want %v", in, got, want)
		}
	}
	f(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, true)
	f(`{"type":"object","properties":{"a":{"type":"string"}}}`, false)
	f(`{"type":"string"}`, false)
	f(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":[]}},"required":["a"]}`, false)
	f(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}}},"required":["a"]}`, true)
	f(`{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`, false)
	f(`{"type":"object","properties":{"a":{"anyOf":[{"type":"object","properties":{"x":{"type":"string"}}},{"type":"null"}]}},"required":["a"]}`, false)
}

func TestSchemaNeedsStandard(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		if got := SchemaNeedsStandard([]byte(in)); got != want {
			t.Errorf("SchemaNeedsStandard(%s) = %v, want %v", in, got, want)
		}
	}
	f(`{"type":"object","properties":{"a":{"type":"string"}}}`, false)
	f(`{"type":"OBJECT"}`, true)
	f(`{"type":"object","properties":{"a":{"type":"string","nullable":true}}}`, true)
	f(`{"type":"object","propertyOrdering":["a"]}`, true)
}

// FuzzAppendSchema: any valid JSON gives valid JSON under every option,
// and SchemaStandard alone never grows it (the Gemini reader reserves
// len(schema) bytes of Scratch for the copy).
func FuzzAppendSchema(f *testing.F) {
	f.Add([]byte(`{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true,"enum":["x"]}},"propertyOrdering":["a"]}`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":["string","null"],"minLength":2}},"additionalProperties":true}`))
	f.Add([]byte(`{"anyOf":[{"type":"ARRAY","items":{"type":"INTEGER","format":"int64"}}],"$defs":{"d":{"type":"OBJECT"}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if !gjson.ValidBytes(in) {
			return
		}
		for _, o := range []SchemaOpts{SchemaStandard, SchemaClosed, SchemaAnthropic, SchemaStandard | SchemaClosed | SchemaAnthropic} {
			out := AppendSchema(nil, in, o)
			if !gjson.ValidBytes(out) {
				t.Fatalf("AppendSchema(%s, %d) = %s: not JSON", in, o, out)
			}
			if o == SchemaStandard && len(out) > len(in) {
				t.Fatalf("AppendSchema(%s, SchemaStandard) grew to %s", in, out)
			}
		}
		_ = SchemaStrictable(in)
		_ = SchemaNeedsStandard(in)
	})
}

// TestSchemaNestingBound: a schema nested past maxSchemaNesting is copied
// as it is, in time linear in its size (rewriting it level by level took
// seconds of CPU for a few hundred KB nested thousands deep), and is not
// strictable; one at the bound is still rewritten.
func TestSchemaNestingBound(t *testing.T) {
	nest := func(levels int) string {
		return strings.Repeat(`{"type":"ARRAY","nullable":true,"items":`, levels) + `{"type":"STRING"}` + strings.Repeat(`}`, levels)
	}
	deep := nest(9000)
	if got := AppendSchema(nil, []byte(deep), SchemaStandard); string(got) != deep {
		t.Fatalf("a schema 9000 levels deep was rewritten: %.80s", got)
	}
	if SchemaStrictable([]byte(strings.ReplaceAll(deep, `"ARRAY","nullable":true`, `"object","additionalProperties":false,"properties":{},"required":[]`))) {
		t.Fatal("a schema nested past the bound is strictable")
	}
	at := nest(maxSchemaNesting - 1)
	if got := string(AppendSchema(nil, []byte(at), SchemaStandard)); !strings.HasPrefix(got, `{"type":["array","null"]`) || strings.Contains(got, "STRING") {
		t.Fatalf("a schema %d levels deep was not rewritten: %.80s", maxSchemaNesting, got)
	}
	for _, c := range []struct {
		json string
		n    int
		want bool
	}{
		{`{}`, 1, false}, {`{"a":[]}`, 1, true}, {`{"a":"[[[["}`, 1, false}, {`[[["\"]]]"]]]`, 3, false}, {`[[[[]]]]`, 3, true},
	} {
		if got := nestsDeeper([]byte(c.json), c.n); got != c.want {
			t.Errorf("nestsDeeper(%s, %d) = %v", c.json, c.n, got)
		}
	}
}

// TestStrictableManyProperties: whether every property is required is
// decided the same way below and above the size where allRequired stops
// comparing pair by pair (20,000 properties took 6.6 s pair by pair).
func TestStrictableManyProperties(t *testing.T) {
	schema := func(n int, drop int) string {
		var p, r strings.Builder
		for i := range n {
			k := `"p` + strconv.Itoa(i) + `"`
			if i > 0 {
				p.WriteByte(',')
			}
			p.WriteString(k + `:{"type":"string"}`)
			if i != drop {
				if r.Len() > 0 {
					r.WriteByte(',')
				}
				r.WriteString(k)
			}
		}
		return `{"type":"object","additionalProperties":false,"properties":{` + p.String() + `},"required":[` + r.String() + `]}`
	}
	for _, n := range []int{3, 64, 20000} {
		if !SchemaStrictable([]byte(schema(n, -1))) {
			t.Errorf("%d properties, all required: not strictable", n)
		}
		if SchemaStrictable([]byte(schema(n, n/2))) {
			t.Errorf("%d properties, one not required: strictable", n)
		}
	}
}
