package server

import (
	"errors"
	"io"
)

// streamBody is the body of a streamed HTTP response, handed to fasthttp
// with an unknown length. fasthttp frames such a body as chunks and, since
// streamBody supports WriteTo, calls WriteTo on the connection's own
// goroutine with a writer that sends each Write as one chunk, flushed. The
// relay runs there: each flush of its buffered writer is one chunk on the
// socket, with no goroutine, pipe or copy between the relay and the
// client. (fasthttp's SetBodyStreamWriter would start a goroutine per
// stream and copy every byte through a pipe.)
//
// Ownership: fasthttp calls Close exactly once, after WriteTo or instead
// of it (the client left before the head went out), and Close releases x.
// It is x's own (x.sbody), bound once per pooled exchange.
type streamBody struct {
	x   *exchange
	ran bool // WriteTo ran the stream
}

// SupportsBodyWriteTo tells fasthttp to use WriteTo (fasthttp.BodyWriterTo).
func (b *streamBody) SupportsBodyWriteTo() bool { return true }

// WriteTo runs x's stream into w. An error (the client is gone) tells
// fasthttp to close the connection instead of ending the chunked body.
func (b *streamBody) WriteTo(w io.Writer) (int64, error) {
	x := b.x
	b.ran = true
	bw := &x.bw
	bw.Reset(w)
	x.streamTo(bw)
	bw.Reset(nil)
	if x.result == resultClientGone || x.result == resultWriteTimeout {
		return x.bytesOut, errClientGone
	}
	return x.bytesOut, nil
}

// Read is never used: every fasthttp path that consumes a body stream
// supporting WriteTo calls WriteTo.
func (b *streamBody) Read([]byte) (int, error) { return 0, errStreamRead }

var errStreamRead = errors.New("BUG: a stream body was read instead of written with WriteTo")

// Close ends the lease the stream held. A stream fasthttp never wrote (the
// client left first) runs as it would have against a client that is gone,
// on a goroutine of its own since its upstream may take its time, and
// releases x there, as its end always does.
func (b *streamBody) Close() error {
	x := b.x
	if !b.ran {
		x.bw.Reset(goneWriter{})
		go x.writeStream(&x.bw)
		return nil
	}
	b.ran = false
	x.releaseOnce(x.owner())
	return nil
}

// goneWriter is a client that left: every write fails.
type goneWriter struct{}

func (goneWriter) Write([]byte) (int, error) { return 0, errClientGone }
