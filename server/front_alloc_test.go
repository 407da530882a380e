//go:build !race

package server

import (
	"testing"

	"slipstream/server/config"
)

// TestFrontDoorAllocs: the Host, Origin and content type checks of a
// request that passes allocate nothing.
func TestFrontDoorAllocs(t *testing.T) {
	fd := newFrontDoor(&config.Config{AllowedHosts: []string{"proxy.internal"}, CORS: config.CORS{AllowedOrigins: []string{"http://localhost:3000"}}})
	hosts := [][]byte{[]byte("127.0.0.1:8317"), []byte("[::1]:8317"), []byte("localhost:8317"), []byte("proxy.internal"), []byte("192.168.1.20")}
	origin, ct := []byte("http://localhost:3000"), []byte("application/json; charset=utf-8")
	n := testing.AllocsPerRun(1000, func() {
		for _, h := range hosts {
			if !fd.hostAllowed(h) {
				t.Fatalf("%s refused", h)
			}
		}
		if !fd.originAllowed(origin) || !jsonContentType(ct) {
			t.Fatal("refused")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
}
