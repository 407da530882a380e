package server

import (
	"net"
	"syscall"
	"testing"
)

// TestLowWaterMark: mark keeps the socket's SO_RCVLOWAT at most what is
// still to arrive and, over lowatMin, at least half of it; below lowatMin,
// and after set(1), it is the kernel's default of one byte.
func TestLowWaterMark(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1)) // until the test closes its end
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := newLowWater(c)
	got := func() int {
		var v int
		w.rc.Control(func(fd uintptr) { v, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT) })
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, ahead := range []int{1 << 20, 1<<20 - 8<<10, 900 << 10, 500 << 10, 400 << 10, 2 << 20, 200 << 10, lowatMin, lowatMin - 1, 10 << 10, 0, -5} {
		w.mark(ahead)
		v := got()
		switch {
		case ahead < lowatMin && v != 1:
			t.Fatalf("ahead %d: mark %d, want 1", ahead, v)
		case ahead >= lowatMin && (v > ahead || 2*v < ahead):
			t.Fatalf("ahead %d: mark %d, want at most it and at least half", ahead, v)
		}
	}
	w.mark(1 << 20)
	w.set(1)
	if v := got(); v != 1 {
		t.Fatalf("after set(1): mark %d", v)
	}
}
