package testkit

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address whose port was free a moment ago,
// for a process that must be told its address before it listens.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ClosedAddr returns a loopback address nothing listens on: a dial gets
// connection refused.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	return FreeAddr(t)
}
