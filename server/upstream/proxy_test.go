package upstream

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// tunnelProxy is a loopback proxy (HTTP CONNECT or SOCKS5) that records
// each target it is asked for and connects every target to one upstream
// address, so that names like via.invalid reach a loopback stub.
type tunnelProxy struct {
	addr    string
	to      string
	mu      sync.Mutex
	targets []string
}

func (p *tunnelProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

func startProxy(t *testing.T, to string, socks bool) *tunnelProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &tunnelProxy{addr: ln.Addr().String(), to: to}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if socks {
				go p.serveSOCKS(c)
			} else {
				go p.serveCONNECT(c)
			}
		}
	}()
	return p
}

func (p *tunnelProxy) record(target string) {
	p.mu.Lock()
	p.targets = append(p.targets, target)
	p.mu.Unlock()
}

func (p *tunnelProxy) serveCONNECT(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	p.record(req.Host)
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	pipe(c, br, up)
}

// serveSOCKS speaks the SOCKS5 subset a client without authentication
// uses (RFC 1928): greeting, CONNECT by name or IPv4.
func (p *tunnelProxy) serveSOCKS(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || head[0] != 5 {
		return
	}
	if _, err := br.Discard(int(head[1])); err != nil {
		return
	}
	c.Write([]byte{5, 0})
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		var ip [4]byte
		io.ReadFull(br, ip[:])
		host = net.IP(ip[:]).String()
	case 3:
		n, _ := br.ReadByte()
		name := make([]byte, n)
		io.ReadFull(br, name)
		host = string(name)
	default:
		return
	}
	var port [2]byte
	io.ReadFull(br, port[:])
	p.record(net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))))
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
	pipe(c, br, up)
}

func pipe(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite(); close(done) }()
	io.Copy(c, up)
	<-done
}

// get sends one request through a new client and returns the body.
func get(t *testing.T, o Options) (string, error) {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod("POST")
	req.SetRequestURI(o.BaseURL + "/v1/messages")
	if err := c.Do(req, resp); err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.BodyStream())
	resp.CloseBodyStream()
	return string(b), err
}

func TestProxyExplicit(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "via "+r.Host) }))
	t.Cleanup(up.Close)
	upAddr := strings.TrimPrefix(up.URL, "http://")
	for _, socks := range []bool{false, true} {
		p := startProxy(t, upAddr, socks)
		scheme := "http://"
		if socks {
			scheme = "socks5://"
		}
		// A loopback upstream goes through an explicit proxy too.
		body, err := get(t, Options{BaseURL: up.URL, Proxy: scheme + p.addr})
		if err != nil || body != "via "+upAddr {
			t.Fatalf("socks=%v: %q %v", socks, body, err)
		}
		body, err = get(t, Options{BaseURL: "http://via.invalid:8080", Proxy: scheme + p.addr})
		if err != nil || body != "via via.invalid:8080" {
			t.Fatalf("socks=%v: %q %v", socks, body, err)
		}
		if got := strings.Join(p.seen(), ","); got != upAddr+",via.invalid:8080" {
			t.Fatalf("socks=%v: proxy saw %q", socks, got)
		}
	}
}

func TestProxyTLSThroughCONNECT(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls "+r.Host) }))
	t.Cleanup(up.Close)
	p := startProxy(t, strings.TrimPrefix(up.URL, "https://"), false)
	// The test certificate names example.com: the TLS session runs end to
	// end through the tunnel, verified against the upstream's name.
	tlsCfg := up.Client().Transport.(*http.Transport).TLSClientConfig
	body, err := get(t, Options{BaseURL: "https://example.com", Proxy: "http://" + p.addr, TLS: tlsCfg})
	if err != nil || body != "tls example.com" {
		t.Fatalf("%q %v", body, err)
	}
	// The same from HTTPS_PROXY (HTTP_PROXY names another proxy, which an
	// https upstream must not use).
	t.Setenv("HTTPS_PROXY", "http://"+p.addr)
	t.Setenv("HTTP_PROXY", "http://"+closedProxy(t))
	t.Setenv("NO_PROXY", "")
	body, err = get(t, Options{BaseURL: "https://example.com", TLS: tlsCfg})
	if err != nil || body != "tls example.com" {
		t.Fatalf("HTTPS_PROXY: %q %v", body, err)
	}
	if got := strings.Join(p.seen(), ","); got != "example.com:443,example.com:443" {
		t.Fatalf("proxy saw %q", got)
	}
}

// closedProxy is a loopback address where no proxy listens.
func closedProxy(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestProxyFromEnvironment(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "via "+r.Host) }))
	t.Cleanup(up.Close)
	p := startProxy(t, strings.TrimPrefix(up.URL, "http://"), false)
	t.Setenv("HTTP_PROXY", "http://"+p.addr)
	t.Setenv("HTTPS_PROXY", "http://"+p.addr)
	t.Setenv("NO_PROXY", "bypass.invalid")
	body, err := get(t, Options{BaseURL: "http://via.invalid"})
	if err != nil || body != "via via.invalid" {
		t.Fatalf("%q %v", body, err)
	}
	// NO_PROXY: dialed directly, which for a .invalid name is a DNS
	// failure, and the proxy never hears of it.
	_, err = get(t, Options{BaseURL: "http://bypass.invalid"})
	if Classify(err) != CauseDNS {
		t.Fatalf("NO_PROXY host: %v (cause %v), want a direct dial's DNS failure", err, Classify(err))
	}
	// direct ignores the environment.
	_, err = get(t, Options{BaseURL: "http://via.invalid", Proxy: "direct"})
	if Classify(err) != CauseDNS {
		t.Fatalf("proxy: direct: %v", err)
	}
	// Loopback upstreams are never proxied from the environment (as in
	// Go's net/http): a local server keeps working behind a corporate proxy.
	body, err = get(t, Options{BaseURL: up.URL})
	if err != nil || !strings.HasPrefix(body, "via 127.0.0.1") {
		t.Fatalf("loopback: %q %v", body, err)
	}
	if got := strings.Join(p.seen(), ","); got != "via.invalid:80" {
		t.Fatalf("proxy saw %q, want only via.invalid:80", got)
	}
}

func TestProxySettingErrors(t *testing.T) {
	for _, bad := range []string{"ftp://u:hunter2@proxy:21", "http://", "::"} {
		_, err := New(Options{BaseURL: "https://api.example.com", Proxy: bad})
		if err == nil {
			t.Fatalf("proxy %q accepted", bad)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("error quotes a password: %v", err)
		}
	}
}
