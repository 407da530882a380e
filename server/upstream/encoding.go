package upstream

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"

	"github.com/valyala/fasthttp"

	"slipstream/pool"
)

// slipstream asks every upstream for Accept-Encoding: identity (it parses
// streams and translates bodies). An upstream may compress anyway; these
// are the answers to that.
var (
	// ErrEncodedStream is an event stream in an encoding slipstream does
	// not decode (CanDecode): it cannot be framed event by event, so it is
	// refused before any byte reaches the client.
	ErrEncodedStream = errors.New("upstream sent a compressed event stream although asked for identity encoding")
	// ErrEncoding is a body in an encoding slipstream does not decode.
	ErrEncoding = errors.New("upstream body has an unsupported Content-Encoding")
	// ErrDecodedTooLarge is a compressed body that decodes past the limit.
	ErrDecodedTooLarge = errors.New("upstream body decodes past the size limit")
)

// IsEncoded reports whether resp's body carries a Content-Encoding other
// than identity.
func IsEncoded(resp *fasthttp.Response) bool {
	ce := resp.Header.ContentEncoding()
	return len(ce) > 0 && !equalFold(ce, "identity")
}

// AppendDecoded appends body, decoded from the Content-Encoding enc
// (gzip or deflate), to dst, at most max bytes. It allocates a decoder: it
// serves the rare upstream that compresses although asked not to.
func AppendDecoded(dst, body, enc []byte, max int) ([]byte, error) {
	var r io.Reader
	var err error
	switch {
	case equalFold(enc, "gzip") || equalFold(enc, "x-gzip"):
		r, err = gzip.NewReader(bytes.NewReader(body))
	case equalFold(enc, "deflate"):
		// RFC 9110 deflate is zlib-wrapped; some servers send it raw.
		if r, err = zlib.NewReader(bytes.NewReader(body)); err != nil {
			r, err = flate.NewReader(bytes.NewReader(body)), nil
		}
	default:
		return dst, ErrEncoding
	}
	if err != nil {
		return dst, err
	}
	start := len(dst)
	if dst, err = pool.AppendCapped(dst, r, max); err == pool.ErrOverCap {
		err = ErrDecodedTooLarge
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// CanDecode reports whether slipstream decodes the Content-Encoding enc:
// gzip and deflate, what a server that ignores Accept-Encoding: identity
// sends in practice.
func CanDecode(enc []byte) bool {
	return equalFold(enc, "gzip") || equalFold(enc, "x-gzip") || equalFold(enc, "deflate")
}

// NewDecoder returns a reader of r decoded from enc (CanDecode). It reads
// the compressed header first, so it blocks until the upstream sends it:
// call it where the stream is read. It allocates a decompressor per
// stream, which only a misbehaving upstream costs.
func NewDecoder(r io.Reader, enc []byte) (io.Reader, error) {
	switch {
	case equalFold(enc, "gzip") || equalFold(enc, "x-gzip"):
		return gzip.NewReader(r)
	case equalFold(enc, "deflate"):
		// RFC 9110 deflate is zlib-wrapped (a first byte of 0x?8 with a
		// valid check); some servers send raw deflate.
		br := bufio.NewReader(r)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return nil, ErrEncoding
}
