package codec

import (
	"strings"
	"testing"
)

// walk renders a document through a Cursor, entering every container, so
// the test sees each value the cursor stops at.
func walk(c *Cursor, out *strings.Builder) {
	switch c.Peek() {
	case '{':
		c.Object()
		out.WriteByte('{')
		for k, ok := c.Key(); ok; k, ok = c.Key() {
			out.WriteString(string(k) + ":")
			walk(c, out)
			out.WriteByte(';')
		}
		out.WriteByte('}')
	case '[':
		c.Array()
		out.WriteByte('[')
		for c.Elem() {
			walk(c, out)
			out.WriteByte(';')
		}
		out.WriteByte(']')
	default:
		out.Write(c.Raw())
	}
}

func TestCursor(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		c := NewCursor([]byte(in))
		var out strings.Builder
		walk(&c, &out)
		if out.String() != want {
			t.Fatalf("walk(%s) = %s, want %s", in, out.String(), want)
		}
	}
	f(`{}`, `{}`)
	f(` { "a" : [ 1 , "x\"]" , { } ] , "b" : {"c":null} } `, `{a:[1;"x\"]";{};];b:{c:null;};}`)
	f(`[[],[[]],{"k":[true,false]}]`, `[[];[[];];{k:[true;false;];};]`)

	// Skipping and taking whole values leaves the cursor after them.
	c := NewCursor([]byte(`{"skip":{"deep":[1,2,{"x":"}"}]},"take":[1,{"y":2}],"n":-1.5e3}`))
	if !c.Object() {
		t.Fatal("not an object")
	}
	k, _ := c.Key()
	c.Skip()
	k2, _ := c.Key()
	raw := c.Raw()
	k3, _ := c.Key()
	n := c.Raw()
	if _, more := c.Key(); more || string(k) != "skip" || string(k2) != "take" || string(raw) != `[1,{"y":2}]` || string(k3) != "n" || string(n) != "-1.5e3" {
		t.Fatalf("got %s %s %s %s %s", k, k2, raw, k3, n)
	}
	// Entering a value of the wrong kind skips it.
	c = NewCursor([]byte(`["str",{"a":1},3]`))
	c.Array()
	c.Elem()
	if c.Object() {
		t.Fatal("a string is not an object")
	}
	c.Elem()
	if !c.Object() {
		t.Fatal("object not entered")
	}
	c.Key()
	c.Skip()
	c.Key()
	c.Elem()
	if string(c.Raw()) != "3" {
		t.Fatal("lost position")
	}
}
