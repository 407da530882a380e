package pool

import (
	"errors"
	"io"
	"slices"
)

// ErrOverCap is returned by AppendCapped when the reader holds more than
// the cap allows.
var ErrOverCap = errors.New("more bytes than the cap allows")

// minRead is the least spare capacity AppendCapped reads into.
const minRead = 512

// maxEmptyReads is how many (0, nil) reads in a row AppendCapped accepts
// before it gives up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// AppendCapped appends to dst what r yields, reading straight into dst's
// spare capacity, until io.EOF, an error, or more than maxBytes bytes.
//
// It consumes at most maxBytes+1 bytes of r and appends every byte it
// consumed, so a caller may still relay dst's bytes followed by the rest
// of r. It returns:
//   - nil when r ended (io.EOF) after at most maxBytes bytes; exactly
//     maxBytes bytes followed by io.EOF is not over the cap;
//   - ErrOverCap when r yielded more than maxBytes bytes: dst then holds
//     the maxBytes+1 bytes read, and r is positioned right after them;
//   - r's error, as it is, with the bytes read before it appended;
//   - io.ErrNoProgress after 100 reads in a row that returned (0, nil).
//
// dst grows by doubling (at least 512 bytes at a time, never past what
// maxBytes+1 more bytes need), so a dst whose spare capacity already
// holds the whole body and the probe byte allocates nothing. A negative
// maxBytes is taken as 0.
func AppendCapped(dst []byte, r io.Reader, maxBytes int) ([]byte, error) {
	limit := len(dst) + max(maxBytes, 0) + 1 // the probe byte past the cap included
	empty := 0
	for {
		if len(dst) == cap(dst) {
			dst = slices.Grow(dst, min(max(cap(dst), minRead), limit-len(dst)))
		}
		n, err := r.Read(dst[len(dst):min(cap(dst), limit)])
		dst = dst[:len(dst)+n]
		switch {
		case len(dst) == limit:
			return dst, ErrOverCap
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, err
		case n > 0:
			empty = 0
		default:
			if empty++; empty == maxEmptyReads {
				return dst, io.ErrNoProgress
			}
		}
	}
}
