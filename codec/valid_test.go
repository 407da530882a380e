package codec

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// oracle is what Valid must answer: encoding/json's grammar, plus UTF-8.
func oracle(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }

func TestValid(t *testing.T) {
	f := func(s string, want bool) {
		t.Helper()
		if got := Valid([]byte(s)); got != want || oracle([]byte(s)) != want {
			t.Fatalf("Valid(%q) = %v, oracle %v, want %v", s, got, oracle([]byte(s)), want)
		}
	}
	f(`{}`, true)
	f(` {"a" : [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `, true)
	f(`"plain ascii string longer than eight bytes, no escapes at all"`, true)
	f(`"héllo wörld — 日本語 😀"`, true)
	f(`[]`, true)
	f(`0`, true)
	f(``, false)
	f(`{`, false)
	f(`{"a":1,}`, false)
	f(`[1,]`, false)
	f(`{"a" 1}`, false)
	f(`01`, false)
	f(`1.`, false)
	f(`1e`, false)
	f(`-`, false)
	f(`"unterminated`, false)
	f("\"tab\tinside\"", false)
	f(`"\x"`, false)
	f(`"\u12"`, false)
	f("\"bad utf8 \xff here\"", false)
	f(`tru`, false)
	f(`{} {}`, false)
	f(`{"a":"b"}x`, false)
	f(strings.Repeat("[", 10001)+strings.Repeat("]", 10001), false)
	f(strings.Repeat("[", 100)+strings.Repeat("]", 100), true)
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"model":"x","messages":[{"role":"user","content":"hi\n"}]}`, `[1,2,{"a":null}]`, `"é\u00e9"`, `{"a":`, "\"\xff\"", `-0.5e-7`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) != oracle(b) {
			t.Fatalf("Valid(%q) = %v, oracle %v", b, Valid(b), oracle(b))
		}
	})
}

func TestValidShape(t *testing.T) {
	f := func(s string, want bool) {
		t.Helper()
		if got := ValidShape([]byte(s)); got != want {
			t.Fatalf("ValidShape(%q) = %v, want %v", s, got, want)
		}
	}
	f(`{"a":"x\"y\\","b":[1,2]}`, true)
	f(`{"a":"\\\\"}`, true)
	f(`{"a":"\\\""}`, true)
	f(`{"a":"\\\"}`, false)               // the last quote is escaped: unterminated
	f("{\"a\":\"tab\there \xff\"}", true) // string content is not judged
	f(`{"a":"\q"}`, true)
	f(`{"a":1,}`, false)
	f(`{"a"}`, false)
	f(`[1 2]`, false)
	f(`{"model":"x"`, false)
}

func FuzzValidShape(f *testing.F) {
	for _, s := range []string{`{"a":"b\\"}`, `[1,"\"",{}]`, `{"x":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Anything valid is well-shaped; anything well-shaped with valid
		// strings is valid.
		if Valid(b) && !ValidShape(b) {
			t.Fatalf("valid but not well-shaped: %q", b)
		}
	})
}

func TestValidShapeTop(t *testing.T) {
	keys := []string{"model", "stream"}
	vals := make([][]byte, 2)
	f := func(s string, ok bool, dup int, model, stream string) {
		t.Helper()
		gotDup, got := ValidShapeTop([]byte(s), keys, vals)
		if got != ok || gotDup != dup || string(vals[0]) != model || string(vals[1]) != stream {
			t.Fatalf("ValidShapeTop(%q) = %v dup %d %q %q", s, got, gotDup, vals[0], vals[1])
		}
		if ok != ValidShape([]byte(s)) {
			t.Fatalf("ValidShapeTop and ValidShape disagree on %q", s)
		}
	}
	f(`{"model":"m","messages":[{"model":"inner"}],"stream":true}`, true, -1, `"m"`, `true`)
	f(` { "stream" : false , "model" : "a\"b" } `, true, -1, `"a\"b"`, `false`)
	f(`{}`, true, -1, ``, ``)
	f(`{"model":"m",}`, false, -1, `"m"`, ``)
	// A second model or stream, however its name is spelled.
	f(`{"model":"m","model":"second"}`, true, 0, `"m"`, ``)
	f(`{"model":"m","x":1,"mod\u0065l":"o3-pro"}`, true, 0, `"m"`, ``)
	f(`{"mod\u0065l":"o3-pro","model":"m"}`, true, 0, `"o3-pro"`, ``)
	f(`{"model":"m","Model":"o3-pro"}`, true, 0, `"m"`, ``)
	f(`{"MODEL":"o3-pro","model":"m"}`, true, 0, `"m"`, ``)
	f(`{"stream":false,"model":"m","\u0073tream":true}`, true, 1, `"m"`, `false`)
	f(`{"stream":false,"\u017ftream":true}`, true, 1, ``, `false`) // U+017F folds to s
	f(`{"model":"m","mod\/el":"x","modelx":1,"mode":2,"m\u006fdel2":3}`, true, -1, `"m"`, ``)
	// An escaped name alone is the model.
	f(`{"\u006d\u006f\u0064\u0065\u006c":"m"}`, true, -1, `"m"`, ``)
	// A name that differs only in case is not the model, but still a
	// second occurrence when the model is there too.
	f(`{"Model":"m"}`, true, -1, ``, ``)
}

// TestValidShapeTopTagged: the shape pass reports an origin-tagged string
// exactly when a string value's raw content starts with the prefix
// (taggedValue), and otherwise answers as ValidShapeTop.
func TestValidShapeTopTagged(t *testing.T) {
	keys := []string{"model"}
	vals := make([][]byte, 1)
	for _, c := range []struct {
		s      string
		tagged bool
	}{
		{`{"model":"m","messages":[{"signature":"SsOrAnthabc"}]}`, true},
		{`{"model":"m","messages":[{"signature":"abc"}]}`, false},
		{`{"model":"SsOr"}`, true},
		{`{"model":"SsO"}`, false},
		{`{"SsOrChat":1}`, false},             // a member name: never a token
		{`{"a":["x","SsOrResp"]}`, true},      // an array element
		{`{"a":"text \"SsOr inside"}`, false}, // inside a string
		{`{"a":"text \\"}`, false},
		{`{"a":"SsOr`, false},
		{`{"a":"b SsOr"}`, false},
		{`{"a":"\\SsOr"}`, false},
		{`{"a":"\u0053sOr"}`, false}, // escaped: not the raw prefix
		{`{"a":{"b":{"c":"SsOrGemi"}}}`, true},
		{`[ "SsOr" ]`, false},
	} {
		b := []byte(c.s)
		dup, tagged, ok := ValidShapeTopTagged(b, keys, vals)
		wantDup, wantOK := ValidShapeTop(b, keys, vals)
		if ok != wantOK || dup != wantDup {
			t.Fatalf("ValidShapeTopTagged(%q) = %v dup %d, ValidShapeTop %v dup %d", c.s, ok, dup, wantOK, wantDup)
		}
		if ok && (tagged != c.tagged || tagged != taggedValue(t, b)) {
			t.Fatalf("ValidShapeTopTagged(%q) tagged = %v, want %v", c.s, tagged, c.tagged)
		}
	}
}

func FuzzValidShapeTopTagged(f *testing.F) {
	for _, s := range []string{`{"a":"SsOrAnth"}`, `{"a":"x\"SsOr"}`, `{"SsOr":1}`, `{"a":[{"b":"SsOrGemi"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dup, tagged, ok := ValidShapeTopTagged(b, nil, nil)
		wantDup, wantOK := ValidShapeTop(b, nil, nil)
		if ok != wantOK || dup != wantDup {
			t.Fatalf("ValidShapeTopTagged(%q) disagrees with ValidShapeTop", b)
		}
		if ok && Valid(b) && tagged != taggedValue(t, b) {
			t.Fatalf("ValidShapeTopTagged(%q) tagged = %v, want %v", b, tagged, !tagged)
		}
	})
}

// taggedValue is the reference for ValidShapeTopTagged's tagged on valid
// JSON: it walks b's tokens with encoding/json and reports whether a
// string that is not a member name starts, as raw bytes, with a quote and
// OriginTagPrefix.
func taggedValue(t *testing.T, b []byte) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var inObject []bool // per open container: an object?
	wantKey := false    // the next string in the innermost object is a name
	tagged := false
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return tagged
		}
		raw := bytes.TrimLeft(b[start:dec.InputOffset()], " \t\r\n,:")
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				inObject = append(inObject, v == '{')
				wantKey = v == '{'
				continue
			}
			inObject = inObject[:len(inObject)-1]
		case string:
			if !wantKey && bytes.HasPrefix(raw, []byte(`"`+OriginTagPrefix)) {
				tagged = true
			}
			if wantKey {
				wantKey = false
				continue
			}
		}
		wantKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

func TestValidTop(t *testing.T) {
	keys := []string{"a"}
	vals := make([][]byte, 1)
	if _, ok := ValidShapeTop([]byte(`{"a":"\0"}`), keys, vals); ValidTop([]byte(`{"a":"\0"}`), keys, vals) || !ok {
		t.Fatal("ValidTop must judge string content; ValidShapeTop must not")
	}
	if !ValidTop([]byte(`{"a":"ok\n","b":[1]}`), keys, vals) || string(vals[0]) != `"ok\n"` {
		t.Fatalf("ValidTop on valid input: %q", vals[0])
	}
}
