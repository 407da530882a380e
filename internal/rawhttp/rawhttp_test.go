package rawhttp

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestUpgradeIsARequest(t *testing.T) {
	t.Parallel()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(Upgrade("/v1/responses", "Host", "localhost", "Origin", "http://localhost:3000"))))
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != "GET" || req.URL.Path != "/v1/responses" || req.Host != "localhost" {
		t.Fatalf("%s %s host %q", req.Method, req.URL.Path, req.Host)
	}
	for k, want := range map[string]string{"Origin": "http://localhost:3000", "Upgrade": "websocket", "Connection": "Upgrade", "Sec-Websocket-Key": WebSocketKey, "Sec-Websocket-Version": "13"} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

func TestDial(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, addr := range []string{"http://" + ln.Addr().String(), ln.Addr().String()} {
		c := Dial(t, addr)
		if got := c.RemoteAddr().String(); got != ln.Addr().String() {
			t.Fatalf("Dial(%q) reached %s", addr, got)
		}
	}
	if got := HostPort("https://h:1"); got != "h:1" {
		t.Fatalf("HostPort: %q", got)
	}
}
