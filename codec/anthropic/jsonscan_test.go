package anthropic

import (
	"testing"

	"github.com/tidwall/gjson"

	"slipstream/codec"
)

func TestStr(t *testing.T) {
	f := func(obj, key, want string) {
		t.Helper()
		got := str(gjson.Parse(obj), key)
		if string(got) != want || (want == "" && got != nil && string(codec.Content(gjson.Get(obj, key))) != "") {
			t.Fatalf("str(%s, %s) = %q, want %q", obj, key, got, want)
		}
		if g := string(codec.Content(gjson.Get(obj, key))); g != want {
			t.Fatalf("gjson disagrees on %s.%s: %q", obj, key, g)
		}
	}
	f(`{"type":"text_delta","text":"a\"b\\n"}`, "text", `a\"b\\n`)
	f(` { "a" : {"text":"no","x":[1,"]}",{"y":"}"}]} , "b":null, "text" : "yes" } `, "text", "yes")
	f(`{"a":1,"b":true,"c":-1.5e3,"text":""}`, "text", "")
	f(`{"text":5}`, "text", "")
	f(`{"x":"y"}`, "text", "")
	f(`{"text":"first","text":"second"}`, "text", "first")
	f(`{"k\"ey":"v","key":"w"}`, "key", "w")
}
