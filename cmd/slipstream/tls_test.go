package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"slipstream/internal/testkit"
	"slipstream/server/config"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and localhost
// (its own CA) with the given serial to dir/cert.pem and dir/key.pem and
// returns the two paths.
func writeCert(t *testing.T, dir string, serial int64) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "slipstream test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, keyf := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	// Written beside and renamed, as certificate renewers do.
	write := func(path string, block *pem.Block) {
		if err := os.WriteFile(path+".new", pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	write(keyf, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	write(cert, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	return cert, keyf
}

// servedSerial handshakes with addr trusting only certFile and returns the
// serial of the certificate served.
func servedSerial(t *testing.T, addr, certFile string) int64 {
	t.Helper()
	pemb, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemb)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("tls handshake: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write([]byte("GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	if !strings.Contains(line, " 200 ") {
		t.Fatalf("GET /readyz over TLS: %q", line)
	}
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

func TestCertReloaderPicksUpRenewedFiles(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCert(t, dir, 1)
	var log bytes.Buffer
	r, err := newCertReloader(config.TLS{CertFile: cert, KeyFile: key}, &log)
	if err != nil {
		t.Fatal(err)
	}
	r.interval = 0
	serial := func() int64 {
		c, err := r.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := x509.ParseCertificate(c.Certificate[0])
		return x.SerialNumber.Int64()
	}
	if serial() != 1 {
		t.Fatal("first certificate")
	}
	writeCert(t, dir, 2)
	if s := serial(); s != 2 {
		t.Fatalf("after renewal: serial %d, want 2", s)
	}
	// A broken file keeps the previous certificate, and says so.
	os.WriteFile(cert, []byte("not a certificate"), 0o600)
	if s := serial(); s != 2 || !strings.Contains(log.String(), "keeping the previous certificate") {
		t.Fatalf("broken renewal: serial %d, log %q", s, log.String())
	}
	if _, err := newCertReloader(config.TLS{CertFile: cert, KeyFile: key}, &log); err == nil {
		t.Fatal("a broken pair at start must be an error")
	}
}

// TestServeTLS runs slipstream with tls: an HTTPS client trusting the
// certificate gets /readyz, a plain one is refused, health -insecure
// works, and renewed files are served without a restart.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeCert(t, dir, 10)
	addr := testkit.FreeAddr(t)
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte("listen: "+addr+"\ntls: {cert_file: "+cert+", key_file: "+key+"}\nproviders:\n  - {name: m, kind: mock, models: [\"*\"]}\n"), 0o600)
	p := startMain(t, "-config", path)
	if line := p.waitFor(t, "listening on "); !strings.Contains(line, "https://"+addr) {
		t.Fatalf("listening line %q", line)
	}
	if s := servedSerial(t, addr, cert); s != 10 {
		t.Fatalf("serial %d", s)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"health", "-insecure", "https://" + addr + "/readyz"}, nil, &out, &errb); code != 0 {
		t.Fatalf("health -insecure: %d %s", code, errb.String())
	}
	if code := run([]string{"health", "https://" + addr + "/readyz"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "certificate") {
		t.Fatalf("health must not trust a self-signed certificate: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"health", "http://" + addr + "/readyz"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "certificate") {
		t.Fatalf("plain HTTP to a TLS listener is asked again over https, which must verify: %d %s", code, errb.String())
	}
	if code := run([]string{"health", "-insecure", "http://" + addr + "/readyz"}, nil, &out, &errb); code != 0 {
		t.Fatalf("an http URL to a TLS-only listener, -insecure: %d %s", code, errb.String())
	}
	// With no URL, the configuration says https and which certificate to
	// trust, whatever names it carries.
	out.Reset()
	if code := run([]string{"health", "-config", path}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "https://"+addr+"/readyz ok") {
		t.Fatalf("health -config of a TLS listener: %d %s %s", code, out.String(), errb.String())
	}
	other := t.TempDir()
	c2, k2 := writeCert(t, other, 12)
	path2 := filepath.Join(other, "s.yaml")
	os.WriteFile(path2, []byte("listen: "+addr+"\ntls: {cert_file: "+c2+", key_file: "+k2+"}\nproviders:\n  - {name: m, kind: mock, models: [\"*\"]}\n"), 0o600)
	errb.Reset()
	if code := run([]string{"health", "-config", path2}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not the one in tls.cert_file") {
		t.Fatalf("a server with another certificate than cert_file's must fail: %d %s", code, errb.String())
	}
	time.Sleep(1100 * time.Millisecond) // past the reloader's check interval
	writeCert(t, dir, 11)
	deadline := time.Now().Add(5 * time.Second)
	for servedSerial(t, addr, cert) != 11 {
		if time.Now().After(deadline) {
			t.Fatal("renewed certificate not served")
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.stop(t)
}
