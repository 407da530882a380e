package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"errors"
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

// healthTarget is what health asks and how it trusts the answer.
type healthTarget struct {
	url      string
	insecure bool   // -insecure: any certificate
	pinned   []byte // DER of the one certificate trusted whatever its names, or nil
}

// healthTargetFromConfig is /readyz of the listener the configuration
// (path, ./slipstream.yaml or the built-in default, with
// SLIPSTREAM_LISTEN) describes: https when it configures tls, trusting
// exactly the certificate of its cert_file (the probe asks its own
// listener, on loopback for an any-address listen, whose certificate
// rarely names that address). ok is false when no configuration loads.
func healthTargetFromConfig(path string) (healthTarget, bool) {
	cfg, _, err := loadConfig(path, "")
	if err != nil {
		return healthTarget{}, false
	}
	u := defaultHealthURL(cfg.Listen)
	if !cfg.TLS.Enabled() {
		return healthTarget{url: u}, true
	}
	t := healthTarget{url: "https" + strings.TrimPrefix(u, "http")}
	if b, err := os.ReadFile(cfg.TLS.CertFile); err == nil {
		if blk, _ := pem.Decode(b); blk != nil && blk.Type == "CERTIFICATE" {
			t.pinned = blk.Bytes
		}
	}
	return t, true
}

// runHealth GETs rawURL (with none, the /readyz its configuration
// describes) and exits 0 when it answers 200, 1 otherwise: a health check
// for images without curl or wget. An http URL whose server answers no
// HTTP (a TLS-only listener) is asked again over https. It speaks just
// enough HTTP/1.1 itself (net/http's initialisation would add to every
// slipstream's resident memory).
func runHealth(rawURL, configPath string, insecure bool, stdout, stderr io.Writer) int {
	t := healthTarget{url: rawURL, insecure: insecure}
	if rawURL == "" {
		var ok bool
		if t, ok = healthTargetFromConfig(configPath); !ok {
			t.url = defaultHealthURL(os.Getenv("SLIPSTREAM_LISTEN"))
		}
		t.insecure = insecure
	}
	status, err := probe(t, 5*time.Second)
	if errors.Is(err, errNotHTTP) && strings.HasPrefix(t.url, "http://") {
		t.url = "https://" + strings.TrimPrefix(t.url, "http://")
		status, err = probe(t, 5*time.Second)
	}
	if err != nil {
		fmt.Fprintf(stderr, "health: %v\n", err)
		return 1
	}
	if status != "200" {
		fmt.Fprintf(stderr, "health: %s answered %s\n", t.url, status)
		return 1
	}
	fmt.Fprintf(stdout, "health: %s ok\n", t.url)
	return 0
}

// errNotHTTP: the server closed the connection without an HTTP answer, as
// a TLS listener does with a plain request.
var errNotHTTP = errors.New("no HTTP answer")

// tlsConfig is how t trusts a server: the system's roots and the URL's
// host name; any certificate with -insecure; the pinned certificate alone,
// whatever its names, when t has one.
func (t healthTarget) tlsConfig(host string) *tls.Config {
	c := &tls.Config{ServerName: host, InsecureSkipVerify: t.insecure}
	if t.pinned != nil && !t.insecure {
		pinned := t.pinned
		c.InsecureSkipVerify = true // replaced by the check below
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, pinned) {
				return errors.New("the server's certificate is not the one in tls.cert_file")
			}
			return nil
		}
	}
	return c
}

// probe sends one GET and returns the response's status code.
func probe(t healthTarget, timeout time.Duration) (string, error) {
	u, err := url.Parse(t.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("want an http(s) URL, got %q", t.url)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	d := &net.Dialer{Timeout: timeout}
	var conn net.Conn
	if u.Scheme == "https" {
		conn, err = tls.DialWithDialer(d, "tcp", host, t.tlsConfig(u.Hostname()))
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
	if err != nil && line == "" && u.Scheme == "http" {
		return "", fmt.Errorf("%s: %w", t.url, errNotHTTP)
	}
	if err != nil {
		return "", fmt.Errorf("no response from %s: %w", t.url, err)
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		if u.Scheme == "http" && line[0] == 0x15 { // a TLS alert record
			return "", fmt.Errorf("%s: %w", t.url, errNotHTTP)
		}
		return "", fmt.Errorf("%s did not answer HTTP", t.url)
	}
	return f[1], nil
}
