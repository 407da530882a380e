package codec

import (
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
	f := func(s string, ok bool, model, stream string) {
		t.Helper()
		if got := ValidShapeTop([]byte(s), keys, vals); got != ok || string(vals[0]) != model || string(vals[1]) != stream {
			t.Fatalf("ValidShapeTop(%q) = %v %q %q", s, got, vals[0], vals[1])
		}
		if ok != ValidShape([]byte(s)) {
			t.Fatalf("ValidShapeTop and ValidShape disagree on %q", s)
		}
	}
	f(`{"model":"m","messages":[{"model":"inner"}],"stream":true}`, true, `"m"`, `true`)
	f(` { "stream" : false , "model" : "a\"b" } `, true, `"a\"b"`, `false`)
	f(`{"model":"m","model":"second"}`, true, `"m"`, ``)
	f(`{}`, true, ``, ``)
	f(`{"model":"m",}`, false, `"m"`, ``)
}

func TestValidTop(t *testing.T) {
	keys := []string{"a"}
	vals := make([][]byte, 1)
	if ValidTop([]byte(`{"a":"\0"}`), keys, vals) || !ValidShapeTop([]byte(`{"a":"\0"}`), keys, vals) {
		t.Fatal("ValidTop must judge string content; ValidShapeTop must not")
	}
	if !ValidTop([]byte(`{"a":"ok\n","b":[1]}`), keys, vals) || string(vals[0]) != `"ok\n"` {
		t.Fatalf("ValidTop on valid input: %q", vals[0])
	}
}
