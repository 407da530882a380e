package codec

import (
	"testing"

	"github.com/tidwall/gjson"
)

func TestField(t *testing.T) {
	f := func(obj, key string, typ gjson.Type, raw string) {
		t.Helper()
		r := Field(gjson.Parse(obj), key)
		if r.Type != typ || r.Raw != raw {
			t.Fatalf("Field(%s, %q) = %v %q, want %v %q", obj, key, r.Type, r.Raw, typ, raw)
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
	f(`{"text":"first","text":"second"}`, "text", gjson.String, `"first"`)
	f(`{"k\"ey":"v","key":"w"}`, "key", gjson.String, `"w"`)
	if r := Field(gjson.Parse(`[1,2]`), "0"); r.Exists() {
		t.Fatalf("array: %v", r)
	}
	if n := Field(gjson.Parse(`{"n":42}`), "n").Int(); n != 42 {
		t.Fatalf("number: %d", n)
	}
	if c := Content(Field(gjson.Parse(`{"s":"a\\b"}`), "s")); string(c) != `a\\b` {
		t.Fatalf("content %s", c)
	}
}

func TestMembersAndElems(t *testing.T) {
	m := ObjectMembers([]byte(` {"a" : [1, {"x":"}"}] , "b":"q\"}" ,"c":null} `[1:]))
	var got []string
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		got = append(got, string(k)+"="+string(v))
	}
	if want := `[a=[1, {"x":"}"}] b="q\"}" c=null]`; fmtList(got) != want {
		t.Fatalf("members %s, want %s", fmtList(got), want)
	}
	e := ArrayElems([]byte(`[ "a\"]" , 2, {"b":[3]} ]`))
	got = got[:0]
	for v, ok := e.Next(); ok; v, ok = e.Next() {
		got = append(got, string(v))
	}
	if want := `["a\"]" 2 {"b":[3]}]`; fmtList(got) != want {
		t.Fatalf("elems %s, want %s", fmtList(got), want)
	}
	if IntValue([]byte("-1234.5")) != -1234 || !IsTrue([]byte("true")) || IsObject([]byte("[")) {
		t.Fatal("scalars")
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

// TestMembersCutShort: an object cut inside a key (bytes not checked
// valid, such as the end of a body found from its last bytes) yields the
// members before the cut and stops, without a panic.
func TestMembersCutShort(t *testing.T) {
	f := func(raw string, keys int) {
		t.Helper()
		m := ObjectMembers([]byte(raw))
		n := 0
		for _, _, ok := m.Next(); ok; _, _, ok = m.Next() {
			n++
		}
		if n != keys {
			t.Errorf("%s: %d members, want %d", raw, n, keys)
		}
	}
	f(`{"0}`, 0)
	f(`{"a":1,"b`, 1)
	f(`{"a":1,"b":2}`, 2)
}
