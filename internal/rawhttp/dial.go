package rawhttp

import (
	"net"
	"strings"
	"testing"
)

// Dial opens a TCP connection to addr, a base URL ("http://host:port") or
// a bare "host:port", and closes it when the test ends. It fails the test
// when the dial fails.
func Dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", HostPort(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// HostPort returns the host:port of a base URL ("http://host:port" or
// "https://host:port"); a bare host:port comes back as it is.
func HostPort(addr string) string {
	if i := strings.Index(addr, "://"); i >= 0 {
		return addr[i+len("://"):]
	}
	return addr
}
