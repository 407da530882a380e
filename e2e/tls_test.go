package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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
)

// testCA writes a test certificate authority and a server certificate it
// signed for 127.0.0.1 and localhost into dir; it returns the CA file (for
// NODE_EXTRA_CA_CERTS) and the server's certificate and key files.
func testCA(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caKey, leafKey := newKey(), newKey()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "slipstream e2e test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// TestSDKsOverTLS serves slipstream over HTTPS (tls: cert_file, key_file)
// with a certificate from a test CA, and drives each official SDK at it
// with the CA trusted through NODE_EXTRA_CA_CERTS; without it the SDK
// refuses the certificate, so the TLS is real.
func TestSDKsOverTLS(t *testing.T) {
	t.Parallel()
	node := needNode(t, "openai")
	needNode(t, "@anthropic-ai/sdk")
	needNode(t, "@google/genai")
	ca, cert, key := testCA(t, t.TempDir())
	cfg := strings.Replace(mockConfig(mockReply), "keys:", "tls:\n  cert_file: "+cert+"\n  key_file: "+key+"\nkeys:", 1)
	p := startSlipstream(t, cfg)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("proxy URL %s", p.URL)
	}
	run := func(script string, extraEnv ...string) sdkResults {
		var res sdkResults
		runNode(t, node, script, append([]string{
			"SLIPSTREAM_URL=" + p.URL,
			"SLIPSTREAM_KEY=" + testKey,
			"SLIPSTREAM_MODEL=mock-e2e",
			"SLIPSTREAM_TOOL=" + sdkTool,
		}, extraEnv...), &res)
		return res
	}
	trust := "NODE_EXTRA_CA_CERTS=" + ca
	t.Run("openai", func(t *testing.T) { testOpenAISDK(t, run("openai.mjs", trust)) })
	t.Run("anthropic", func(t *testing.T) { testAnthropicSDK(t, run("anthropic.mjs", trust)) })
	t.Run("genai", func(t *testing.T) { testGenAISDK(t, run("genai.mjs", trust)) })
	t.Run("untrusted", func(t *testing.T) {
		res := run("openai.mjs", "NODE_EXTRA_CA_CERTS=")
		raw := string(res["chat"])
		if !strings.Contains(raw, `"error"`) {
			t.Fatalf("an SDK that does not trust the test CA connected anyway: %s", raw)
		}
	})
}
