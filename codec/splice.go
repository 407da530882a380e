package codec

// Edit replaces src[Start:End] with Value.
type Edit struct {
	Start, End int
	Value      []byte
}

// AppendSplice appends src with the edits applied, in one pass. Edits must
// be sorted by Start and must not overlap.
func AppendSplice(dst, src []byte, edits []Edit) []byte {
	pos := 0
	for _, e := range edits {
		dst = append(dst, src[pos:e.Start]...)
		dst = append(dst, e.Value...)
		pos = e.End
	}
	return append(dst, src[pos:]...)
}
