//go:build !race

package server

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestWSIdleConnectionCost: an open WebSocket with no response in flight
// costs about 20 KB of heap (fasthttp's 8 KB read buffer, which stays with
// the hijacked connection, the request context frames are served with,
// and the library's buffers) and two goroutines. Budget: 32 KiB.
func TestWSIdleConnectionCost(t *testing.T) {
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, s := wsServer(t, u, "")
	var ws []net.Conn
	dial := func() net.Conn {
		c, _ := net.Dial("tcp", base[7:])
		io.WriteString(c, "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		return c
	}
	for i := 0; i < 5; i++ {
		ws = append(ws, dial())
	}
	// Two collections empty sync.Pool's victim cache, so pooled buffers
	// freed by neither side do not move the figure.
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	for i := 0; i < 200; i++ {
		ws = append(ws, dial())
	}
	for s.ws.Conns() < 205 {
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perConn := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / 200
	t.Logf("per idle connection: %d bytes of heap, %.1f goroutines, %d bytes of stack", perConn, float64(runtime.NumGoroutine()-g0)/200, (after.StackInuse-before.StackInuse)/200)
	if perConn > 32<<10 {
		t.Errorf("an idle WebSocket costs %d bytes of heap, over the 32 KiB budget", perConn)
	}
	for _, c := range ws {
		c.Close()
	}
}
