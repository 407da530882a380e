package server

import (
	"errors"
	"log"
	"net"
	"os"

	"github.com/valyala/fasthttp"
)

// fasthttpLogger is the Logger slipstream gives fasthttp.Server. fasthttp
// logs errors whose text holds the request head ("error when serving
// connection ...: ... contents: <head>"), Authorization included; this
// logger keeps the message and the addresses but writes each error as its
// kind only, and any other value as "-", so no request byte reaches the
// log.
type fasthttpLogger struct{ l *log.Logger }

var _ fasthttp.Logger = fasthttpLogger{}

func (f fasthttpLogger) Printf(format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case error:
			safe[i] = errorKind(v)
		case net.Addr:
			safe[i] = v.String()
		case int, int64, uint64, uint32, int32, float64:
			safe[i] = v
		default:
			safe[i] = "-"
		}
	}
	f.l.Printf("fasthttp: "+format, safe...)
}

// errorKind names what went wrong with a connection or request in words
// of its own: never the error's text, which may quote the request.
func errorKind(err error) string {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		return "request headers too large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return "request body too large"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, net.ErrClosed):
		return "connection closed"
	}
	return "malformed request"
}
