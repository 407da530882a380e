package testkit

import (
	"net"
	"testing"
)

// Serve listens on a loopback port and runs handle on a goroutine of its
// own for each connection accepted, until the test ends (the listener is
// closed then; handle closes its connection). It returns the address.
func Serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}
