package pool

import (
	"errors"
	"io"
	"math"
	"slices"
)

// ErrOverCap is returned by AppendCapped and ReadCapped when the reader
// holds more than the cap allows.
var ErrOverCap = errors.New("more bytes than the cap allows")

// minRead is the least spare capacity a capped read grows by.
const minRead = 512

// maxEmptyReads is how many (0, nil) reads in a row a capped read accepts
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
	limit := cappedLimit(len(dst), maxBytes)
	for {
		var done bool
		var err error
		if dst, done, err = fill(dst, r, limit); done {
			return dst, err
		}
		dst = slices.Grow(dst, growth(dst, limit))
	}
}

// ReadCapped is AppendCapped into a pooled buffer: it appends to b.B and
// returns how many bytes it appended, with AppendCapped's contract.
//
// b.B must belong to b alone (as a buffer from Get does): when b.B is
// full, ReadCapped takes a larger buffer from the pool, moves the bytes
// there and returns b's old array to the pool, so no other view of b.B
// may be kept across the call.
func ReadCapped(b *Buffer, r io.Reader, maxBytes int) (int, error) {
	start := len(b.B)
	limit := cappedLimit(start, maxBytes)
	for {
		var done bool
		var err error
		if b.B, done, err = fill(b.B, r, limit); done {
			return len(b.B) - start, err
		}
		nb := Get(len(b.B) + growth(b.B, limit))
		nb.B = append(nb.B[:0], b.B...)
		b.B, nb.B = nb.B, b.B
		Put(nb)
	}
}

// cappedLimit is the length at which a capped read that starts at n stops:
// maxBytes more bytes and the probe byte past the cap.
func cappedLimit(n, maxBytes int) int {
	return n + min(max(maxBytes, 0), math.MaxInt-n-1) + 1
}

// growth is how much spare capacity a full dst gets: as much as it holds,
// at least minRead, at most what the limit leaves.
func growth(dst []byte, limit int) int {
	return min(max(cap(dst), minRead), limit-len(dst))
}

// fill reads into dst's spare capacity, up to limit, until dst is full
// (done is false: grow it and call again) or the read is over (done is
// true, and err is the capped read's result).
func fill(dst []byte, r io.Reader, limit int) (_ []byte, done bool, err error) {
	empty := 0
	for end := min(cap(dst), limit); len(dst) < end; {
		var n int
		n, err = r.Read(dst[len(dst):end])
		dst = dst[:len(dst)+n]
		switch {
		case len(dst) == limit:
			return dst, true, ErrOverCap
		case err == io.EOF:
			return dst, true, nil
		case err != nil:
			return dst, true, err
		case n > 0:
			empty = 0
		default:
			if empty++; empty == maxEmptyReads {
				return dst, true, io.ErrNoProgress
			}
		}
	}
	return dst, false, nil
}
