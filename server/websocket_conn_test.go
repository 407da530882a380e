//go:build !race

package server

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestWSIdleConnectionCost: an open WebSocket with no response in flight
// costs about 6 KB of heap (its state, 4 KiB, the request context frames
// are served with and the upgrade's headers) and one goroutine, its
// reader: nothing of fasthttp's (its read buffer and the upgrade's
// context go back when the socket is taken over), and no turn's
// goroutine, whose stack stays at the 2 KiB it starts with. Budgets:
// 10 KiB of heap, one goroutine and 3 KiB of stack (a reader grown to
// 4 KiB measures 4.3-4.6 KB).
func TestWSIdleConnectionCost(t *testing.T) {
	u := &sseUpstream{reply: func(int, []byte) upReply { return upReply{body: textAnswer("resp_1", "ok")} }}
	base, s := wsServer(t, u, "")
	var ws []net.Conn
	dial := func() net.Conn { // returns once the 101 arrived, so that sockets open one at a time
		c, err := net.Dial("tcp", base[7:])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, err := bufio.NewReaderSize(c, 16).ReadString('\n'); err != nil || !strings.Contains(line, " 101 ") {
			t.Fatalf("upgrade: %q %v", line, err)
		}
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
	stack := (int64(after.StackInuse) - int64(before.StackInuse)) / 200
	goroutines := float64(runtime.NumGoroutine()-g0) / 200
	t.Logf("per idle connection: %d bytes of heap, %.1f goroutines, %d bytes of stack", perConn, goroutines, stack)
	if perConn > 10<<10 {
		t.Errorf("an idle WebSocket costs %d bytes of heap, over the 10 KiB budget", perConn)
	}
	if stack > 3<<10 || goroutines > 1.5 {
		t.Errorf("an idle WebSocket costs %.1f goroutines and %d bytes of stack, over the budget of one goroutine (its reader) and 3 KiB", goroutines, stack)
	}
	for _, c := range ws {
		c.Close()
	}
}
