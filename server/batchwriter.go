package server

import (
	"io"
	"math"

	"slipstream/pool"
)

// batchWriter is the writer a stream relays into: it collects the events
// written between two flushes and sends them to w in one Write (one chunk,
// one send). Its buffer is a pooled buffer taken by the first write after
// a flush and given back by the flush, so that a live stream holds no
// buffer between its events (a bufio.Writer held 4 KiB for the whole
// stream). A failed Write is kept and returned by every later Flush.
type batchWriter struct {
	w   io.Writer
	buf *pool.Buffer
	err error
}

// Reset points b at w, dropping what it holds.
func (b *batchWriter) Reset(w io.Writer) {
	pool.Put(b.buf)
	*b = batchWriter{w: w}
}

// Write adds p to the batch; it never touches w.
func (b *batchWriter) Write(p []byte) (int, error) {
	if b.buf == nil {
		b.buf = pool.Get(len(p))
	}
	b.buf.B = append(b.buf.B, p...)
	return len(p), nil
}

// Flush sends the batch to w in one Write.
func (b *batchWriter) Flush() error {
	if b.buf == nil || b.err != nil {
		return b.err
	}
	_, b.err = b.w.Write(b.buf.B)
	pool.Put(b.buf)
	b.buf = nil
	return b.err
}

// Buffered is the size of the batch.
func (b *batchWriter) Buffered() int {
	if b.buf == nil {
		return 0
	}
	return len(b.buf.B)
}

// Available is how much more a Write takes without touching w: all of it.
func (b *batchWriter) Available() int { return math.MaxInt }
