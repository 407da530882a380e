package upstream

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// hopByHop are the headers that describe one connection, not the message
// (RFC 9110 section 7.6.1), plus those fasthttp or slipstream set itself.
var hopByHop = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Host", "Content-Length",
}

// clientAuth are the headers that carry the client's key to slipstream; the
// provider's credential replaces them.
var clientAuth = [...]string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"}

// CopyRequestHeaders copies the client's end-to-end headers to the upstream
// request: everything but hop-by-hop headers, those named in Connection,
// the client's credentials, and Accept-Encoding (slipstream reads
// upstream streams, so it asks for identity: SetIdentity).
func CopyRequestHeaders(dst *fasthttp.RequestHeader, src *fasthttp.RequestHeader) {
	conn := src.Peek("Connection")
	for k, v := range src.All() {
		if isHopByHop(k) || isClientAuth(k) || isNamedIn(conn, k) || equalFold(k, "Accept-Encoding") {
			continue
		}
		dst.AddBytesKV(k, v)
	}
}

// CopyResponseHeaders copies an upstream response's end-to-end headers to
// the client's response (request ids, rate-limit headers, retry-after),
// every value of a repeated header (Set-Cookie, Vary). Content-Type and
// Content-Encoding are copied too: the body is passed on as it came, so
// its encoding goes with it. Content-Length is left to fasthttp.
//
// An event stream is the exception: slipstream frames it, decoded, so its
// Content-Encoding stays behind (NewDecoder).
func CopyResponseHeaders(dst *fasthttp.ResponseHeader, src *fasthttp.ResponseHeader) {
	conn := src.Peek("Connection")
	sse := bytes.HasPrefix(src.ContentType(), []byte("text/event-stream"))
	for k, v := range src.All() {
		if isHopByHop(k) || isNamedIn(conn, k) || equalFold(k, "Date") || equalFold(k, "Server") {
			continue
		}
		if sse && equalFold(k, "Content-Encoding") {
			continue
		}
		dst.AddBytesKV(k, v)
	}
}

func isHopByHop(k []byte) bool {
	for _, h := range hopByHop {
		if equalFold(k, h) {
			return true
		}
	}
	return false
}

func isClientAuth(k []byte) bool {
	for _, h := range clientAuth {
		if equalFold(k, h) {
			return true
		}
	}
	return false
}

// isNamedIn reports whether header k is listed in a Connection value.
func isNamedIn(conn, k []byte) bool {
	for len(conn) > 0 {
		var tok []byte
		tok, conn, _ = bytes.Cut(conn, []byte{','})
		if bytes.EqualFold(bytes.TrimSpace(tok), k) {
			return true
		}
	}
	return false
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i]|0x20, s[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// SetIdentity asks the upstream for an unencoded body: slipstream frames
// streams and translates bodies, which it cannot do over compressed bytes.
// (Without the header an upstream may pick any encoding, RFC 9110 section
// 12.5.3.)
func SetIdentity(h *fasthttp.RequestHeader) { h.Set("Accept-Encoding", "identity") }
