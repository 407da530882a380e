package ws

import (
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serveOver runs a whole connection (conn.serve) over a pipe on what the
// client sends, and returns what the server wrote before it closed.
func serveOver(t *testing.T, o Options, in []byte) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/v1/responses")
	c := newConn(New(o), &ctx, nil)
	c.nc = b
	done := make(chan struct{})
	go func() { defer close(done); c.serve() }()
	go func() { _, _ = a.Write(in) }()
	_ = a.SetReadDeadline(time.Now().Add(3 * time.Second))
	out, _ := io.ReadAll(a)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the connection did not end")
	}
	return out
}

// closeCodeIn returns the code of the last close frame in out, or -1.
func closeCodeIn(out []byte) int {
	code := -1
	for len(out) >= 2 {
		n := int(out[1] & 0x7f)
		if len(out) < 2+n {
			break
		}
		if out[0] == 0x88 && n >= 2 {
			code = int(binary.BigEndian.Uint16(out[2:]))
		}
		out = out[2+n:]
	}
	return code
}

// TestPanicEndsOnlyTheConnection: a panic on a connection's reader or
// turn goroutine is recovered: Panicked is told, the client gets close
// 1011, and the process goes on (an unrecovered panic on a goroutine of
// its own would end it).
func TestPanicEndsOnlyTheConnection(t *testing.T) {
	frame := func(p string) []byte {
		f := []byte{0x81, 0x80 | byte(len(p)), 0, 0, 0, 0}
		return append(f, p...)
	}
	create := frame(`{"type":"response.create","model":"m","input":[]}`)
	for _, tc := range []struct {
		where string
		o     func(panicked func(string, any)) Options
	}{
		{"WebSocket reader", func(p func(string, any)) Options {
			return Options{Admit: func(int64, int64) bool { panic("admit") }, Leave: func(int64) {}, Panicked: p}
		}},
		{"WebSocket turn", func(p func(string, any)) Options {
			return Options{Handler: func(*fasthttp.RequestCtx, Sink) Stream { panic("handler") }, Panicked: p}
		}},
	} {
		var told atomic.Value
		out := serveOver(t, tc.o(func(where string, _ any) { told.Store(where) }), create)
		if code := closeCodeIn(out); code != closeInternalError {
			t.Errorf("%s: server wrote % x, want a close 1011", tc.where, out)
		}
		if got, _ := told.Load().(string); got != tc.where {
			t.Errorf("Panicked told %q, want %q", got, tc.where)
		}
	}
}
