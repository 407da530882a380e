package server

import (
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// lingerTime bounds how long a refused connection stays open after its
// answer, reading and dropping what its client still sends.
const lingerTime = time.Second

// closeUnread makes the connection close after a refusal whose request
// body is left unread. Closing a socket with unread bytes makes the
// kernel reset the connection, and a client still writing its body then
// sees its write fail, and may never read the answer (Go's client
// returns the write error). So when body bytes may still come, the
// answer is written, the sending side shut (the client reads the answer
// and an end), and what the client goes on sending is read and dropped
// for at most lingerTime before the close, as net/http's server does.
// Nothing is kept of it: no memory grows with the body.
func closeUnread(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	if ctx.RequestBodyStream() == nil || ctx.Request.Header.ContentLength() == 0 {
		return // nothing unread (or a request served without a connection)
	}
	raw := ctx.Conn()
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) { lingerClose(ctx, raw, c) })
}

// lingerClose writes ctx's response on c, shuts raw's sending side and
// drains c until the client closes or lingerTime passes, then closes c.
func lingerClose(ctx *fasthttp.RequestCtx, raw, c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(lingerTime))
	if _, err := ctx.Response.WriteTo(c); err != nil {
		return
	}
	if cw, ok := raw.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, c)
}
