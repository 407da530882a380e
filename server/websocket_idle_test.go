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

// TestWSIdleSocketMemory: an open WebSocket between frames holds its
// connection state (4 KiB), the upgrade's headers and two parked
// goroutines, and nothing of fasthttp's: the read buffer (8 KiB) and the
// upgrade's request context go back as soon as the socket is taken over.
// Heap and stack bytes per socket are measured over 200 sockets, client
// included. Not run under the race detector, which adds its own shadow
// memory.
func TestWSIdleSocketMemory(t *testing.T) {
	const sockets = 200
	base, s := wsServer(t, &sseUpstream{}, "")
	addr := strings.TrimPrefix(base, "http://")
	open := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /v1/responses HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReaderSize(c, 16).ReadString('\n')
		if err != nil || !strings.Contains(line, " 101 ") {
			t.Fatalf("upgrade: %q %v", line, err)
		}
		return c
	}
	open() // the server's first socket warms its pools
	waitConns := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); s.ws.Conns() != n; {
			if time.Now().After(deadline) {
				t.Fatalf("%d sockets open, want %d", s.ws.Conns(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitConns(1)
	before := settledMem()
	for range sockets {
		open()
	}
	waitConns(1 + sockets)
	after := settledMem()
	heap := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / sockets
	stack := (int64(after.StackInuse) - int64(before.StackInuse)) / sockets
	t.Logf("per idle socket: heap %d B, stacks %d B", heap, stack)
	if heap > 10<<10 {
		t.Errorf("an idle socket holds %d heap bytes, want at most 10 KiB", heap)
	}
	if stack > 12<<10 {
		t.Errorf("an idle socket holds %d stack bytes, want at most 12 KiB", stack)
	}
}

// settledMem reads the memory statistics after two collections, so that
// what is garbage is gone and freed stacks are returned.
func settledMem() runtime.MemStats {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m
}
