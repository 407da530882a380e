package testkit

import "strings"

// BodySize is one of the body sizes the library benchmarks compare edits
// at (docs/ARCHITECTURE.md, "The JSON and buffer libraries, measured").
type BodySize struct {
	Name string
	N    int
}

// BodySizes are 1 KB, 10 KB and 1 MB: a small turn, a typical coding
// agent request, and a long session.
var BodySizes = [...]BodySize{{"1KB", 1 << 10}, {"10KB", 10 << 10}, {"1MB", 1 << 20}}

// Filled returns head, then copies of item joined by commas until the
// whole is about n bytes (at least one item), then tail.
func Filled(n int, head, item, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len()+len(item)/2+len(tail) < n || i == 0; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteString(tail)
	return []byte(b.String())
}
