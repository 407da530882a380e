package openai

import (
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

func TestChatField(t *testing.T) {
	f := func(obj, key string, typ gjson.Type, raw string) {
		t.Helper()
		r := ChatField(gjson.Parse(obj), key)
		if r.Type != typ || r.Raw != raw {
			t.Fatalf("ChatField(%s, %q) = %v %q, want %v %q", obj, key, r.Type, r.Raw, typ, raw)
		}
		if want := gjson.Get(obj, key); r.Exists() != want.Exists() || r.Exists() && r.Raw != want.Raw {
			t.Fatalf("disagrees with gjson.Get: %q vs %q", r.Raw, want.Raw)
		}
	}
	f(`{"a":"x\"y\n"}`, "a", gjson.String, `"x\"y\n"`)
	f(` { "z" : {"a":"no"} , "b":[1,"]",{"c":"}"}], "a" : 12.5 } `, "a", gjson.Number, `12.5`)
	f(`{"z":{"a":1},"a":null}`, "a", gjson.Null, `null`)
	f(`{"a":true,"b":false}`, "b", gjson.False, `false`)
	f(`{"a":{"b":[]}}`, "a", gjson.JSON, `{"b":[]}`)
	f(`{"a":1}`, "b", gjson.Null, ``)
	if r := ChatField(gjson.Parse(`[1,2]`), "0"); r.Exists() {
		t.Fatalf("array: %v", r)
	}
	if n := ChatField(gjson.Parse(`{"n":42}`), "n").Int(); n != 42 {
		t.Fatalf("number: %d", n)
	}
	if c := codec.Content(ChatField(gjson.Parse(`{"s":"a\\b"}`), "s")); string(c) != `a\\b` {
		t.Fatalf("content %s", c)
	}
}
