package ws

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // RFC 6455 section 4.2.2 names SHA-1; nothing secret is hashed
	"encoding/base64"

	"github.com/valyala/fasthttp"
)

// The opening handshake (RFC 6455 section 4.2). fasthttp writes the 101
// set on the response and hands the socket over (a hijack); the library
// the connection used to be upgraded with is not needed: frames are read
// (read.go) and written (conn.flush, control.go) here.

// IsUpgrade reports whether ctx asks for a WebSocket (GET with Upgrade:
// websocket and Connection: upgrade).
func IsUpgrade(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	return ctx.IsGet() && hasToken(h.Peek("Connection"), "upgrade") && hasToken(h.Peek("Upgrade"), "websocket")
}

// hasToken reports whether the comma-separated header value v lists tok,
// compared without regard to ASCII case.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		t := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if equalFold(bytes.Trim(t, " \t"), tok) {
			return true
		}
	}
	return false
}

// checkHandshake reports why the upgrade in ctx cannot be accepted, or
// nil. IsUpgrade has checked the method and the Upgrade and Connection
// headers.
func checkHandshake(ctx *fasthttp.RequestCtx) *refusal {
	h := &ctx.Request.Header
	if !hasToken(h.Peek("Sec-Websocket-Version"), "13") {
		return &refusal{fasthttp.StatusUpgradeRequired, errVersion}
	}
	if !validKey(h.Peek("Sec-Websocket-Key")) {
		return &refusal{fasthttp.StatusBadRequest, errKey}
	}
	return nil
}

// refusal is an upgrade answered with an HTTP error instead of 101.
type refusal struct {
	status int
	reason upgradeErr
}

const (
	errVersion = upgradeErr("unsupported WebSocket version: Sec-WebSocket-Version must be 13")
	errKey     = upgradeErr("Sec-WebSocket-Key must be 16 bytes in base64")
)

// validKey reports whether k is a Sec-WebSocket-Key: 16 bytes in base64.
func validKey(k []byte) bool {
	var b [18]byte // DecodedLen of the 24 characters a valid key has
	if len(k) != 24 {
		return false
	}
	n, err := base64.StdEncoding.Decode(b[:], k)
	return err == nil && n == 16
}

// keyGUID is what RFC 6455 appends to the client's key for the accept
// key.
const keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// appendAccept appends the Sec-WebSocket-Accept value for key.
func appendAccept(dst, key []byte) []byte {
	h := sha1.New() //nolint:gosec // see the import
	h.Write(key)
	h.Write([]byte(keyGUID))
	var sum [sha1.Size]byte
	return base64.StdEncoding.AppendEncode(dst, h.Sum(sum[:0]))
}

// switchProtocols sets the 101 on ctx's response, which fasthttp writes
// before it hands the socket over.
func switchProtocols(ctx *fasthttp.RequestCtx) {
	var acc [28]byte
	r := &ctx.Response
	r.SetStatusCode(fasthttp.StatusSwitchingProtocols)
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Connection", "Upgrade")
	r.Header.SetBytesV("Sec-WebSocket-Accept", appendAccept(acc[:0], ctx.Request.Header.Peek("Sec-Websocket-Key")))
}
