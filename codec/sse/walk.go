package sse

import (
	"bytes"
	"fmt"
	"io"
)

// Walk calls fn for each event of a whole, in-memory stream that carries a
// name or data (comment-only events are skipped), numbering them from 0,
// and returns how many it passed to fn. It stops at fn's first error and
// returns it as is; fn formats it, since it knows the event. It is for
// grammar checkers and tests, not the relay path: ev is valid only during
// the call.
func Walk(stream []byte, fn func(i int, ev *Event) error) (int, error) {
	var rd Reader
	rd.Reset(bytes.NewReader(stream))
	defer rd.Release()
	for i := 0; ; {
		ev, err := rd.Next()
		if err == io.EOF {
			return i, nil
		}
		if err != nil {
			return i, fmt.Errorf("cannot read stream: event %d: %w", i, err)
		}
		if ev.IsComment() {
			continue
		}
		if err := fn(i, &ev); err != nil {
			return i, err
		}
		i++
	}
}
