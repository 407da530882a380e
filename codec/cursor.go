package codec

// Cursor reads JSON in one forward pass, for readers that walk a whole
// document: where Members and Elems must find the end of every value
// before yielding it (and the reader then walks into it again), a Cursor
// walks into containers it is asked to enter and finds the end only of
// the values it takes or skips whole. The input must have passed Valid or
// ValidShape. Every value the cursor stops at must be consumed exactly
// once: with Raw or Skip, or by entering it with Object or Array and
// reading it to its end.
type Cursor struct {
	b []byte
	i int
}

// NewCursor returns a cursor at the start of b.
func NewCursor(b []byte) Cursor { return Cursor{b: b, i: SkipWS(b, 0)} }

// Pos returns the byte offset of the cursor.
func (c *Cursor) Pos() int { return c.i }

// Peek returns the first byte of the value at the cursor, or 0 at the end.
func (c *Cursor) Peek() byte {
	if c.i < len(c.b) {
		return c.b[c.i]
	}
	return 0
}

// Raw consumes the value at the cursor and returns it (a view).
func (c *Cursor) Raw() []byte {
	start := c.i
	c.i = ValueEnd(c.b, c.i)
	return c.b[start:c.i]
}

// Skip consumes the value at the cursor.
func (c *Cursor) Skip() { c.i = ValueEnd(c.b, c.i) }

// Object enters the object at the cursor and returns true; read its
// members with Key. When the value is not an object it is skipped and
// Object returns false.
func (c *Cursor) Object() bool { return c.enter('{') }

// Array enters the array at the cursor and returns true; read its
// elements with Elem. When the value is not an array it is skipped and
// Array returns false.
func (c *Cursor) Array() bool { return c.enter('[') }

func (c *Cursor) enter(open byte) bool {
	if c.Peek() != open {
		c.Skip()
		return false
	}
	c.i++
	return true
}

// Key moves to the next member of the object being read: it returns the
// key (escaped content) with the cursor at its value, or false after
// consuming the closing brace.
func (c *Cursor) Key() ([]byte, bool) {
	i := skipSep(c.b, c.i)
	if i >= len(c.b) || c.b[i] != '"' {
		c.i = min(i+1, len(c.b)) // the closing brace
		return nil, false
	}
	e := StringEnd(c.b, i)
	key := c.b[i+1 : e]
	i = SkipWS(c.b, e+1)
	if i < len(c.b) && c.b[i] == ':' {
		i = SkipWS(c.b, i+1)
	}
	c.i = i
	return key, true
}

// Elem moves to the next element of the array being read: it returns true
// with the cursor at the element, or false after consuming the closing
// bracket.
func (c *Cursor) Elem() bool {
	i := skipSep(c.b, c.i)
	if i >= len(c.b) || c.b[i] == ']' {
		c.i = min(i+1, len(c.b))
		return false
	}
	c.i = i
	return true
}
