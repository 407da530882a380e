package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// defaultHealthURL is what `slipstream health` asks with no URL: /readyz
// on SLIPSTREAM_LISTEN's port (an any-address host asked on loopback), else
// on the default listen address.
func defaultHealthURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		host, port = "127.0.0.1", "8317"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}

// runHealth GETs rawURL and exits 0 when it answers 200, 1 otherwise: a
// health check for images without curl or wget. It speaks just enough
// HTTP/1.1 itself (net/http's initialisation would add to every
// slipstream's resident memory).
func runHealth(rawURL string, insecure bool, stdout, stderr io.Writer) int {
	if rawURL == "" {
		rawURL = defaultHealthURL(os.Getenv("SLIPSTREAM_LISTEN"))
	}
	status, err := probe(rawURL, insecure, 5*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "health: %v\n", err)
		return 1
	}
	if status != "200" {
		fmt.Fprintf(stderr, "health: %s answered %s\n", rawURL, status)
		return 1
	}
	fmt.Fprintf(stdout, "health: %s ok\n", rawURL)
	return 0
}

// probe sends one GET and returns the response's status code.
func probe(rawURL string, insecure bool, timeout time.Duration) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http(s) URL, got %q", rawURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	d := &net.Dialer{Timeout: timeout}
	var conn net.Conn
	if u.Scheme == "https" {
		conn, err = tls.DialWithDialer(d, "tcp", host, &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: insecure})
	} else {
		conn, err = d.Dial("tcp", host)
	}
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	path := u.RequestURI()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: slipstream-health\r\nConnection: close\r\n\r\n", path, u.Host); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("no response from %s: %w", rawURL, err)
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return "", fmt.Errorf("%s did not answer HTTP", rawURL)
	}
	return f[1], nil
}
