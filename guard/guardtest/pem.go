package guardtest

import (
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"strings"
)

// privateKey: PEM blocks of the key types agents meet: PKCS #1 RSA, SEC 1
// EC, PKCS #8 (RSA and Ed25519) and OpenSSH. The bodies are DER (or the
// OpenSSH format) with the real structure and random key material, so they
// decode as base64 and look like the real thing; they are no usable key.
func privateKey(r *rand.Rand, v int) Secret {
	var val, variant string
	switch v {
	case 0:
		val, variant = pemBlock("RSA PRIVATE KEY", rsaPKCS1(r), 64), "rsa"
	case 1:
		val, variant = pemBlock("EC PRIVATE KEY", ecSEC1(r), 64), "ec"
	case 2:
		val, variant = pkcs8RSA(r), "pkcs8_rsa"
	case 3:
		val, variant = pemBlock("PRIVATE KEY", ed25519PKCS8(r), 64), "pkcs8_ed25519"
	default:
		val, variant = pemBlock("OPENSSH PRIVATE KEY", opensshEd25519(r), 70), "openssh"
	}
	return Secret{Rule: "private_key", Value: val, Variant: variant}
}

// pemBlock writes der as a PEM block with lines of width characters and a
// final line break.
func pemBlock(typ string, der []byte, width int) string {
	b64 := base64.StdEncoding.EncodeToString(der)
	var b strings.Builder
	b.WriteString("-----BEGIN " + typ + "-----\n")
	for len(b64) > width {
		b.WriteString(b64[:width] + "\n")
		b64 = b64[width:]
	}
	b.WriteString(b64 + "\n-----END " + typ + "-----\n")
	return b.String()
}

// derTLV wraps content in an ASN.1 element of tag with a DER length.
func derTLV(tag byte, content []byte) []byte {
	out := []byte{tag}
	switch n := len(content); {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	default:
		out = append(out, 0x82, byte(n>>8), byte(n))
	}
	return append(out, content...)
}

// derInt is a positive INTEGER of n random bytes (top bit set, so a zero
// byte leads it, as in real keys).
func derInt(r *rand.Rand, n int) []byte {
	b := randBytes(r, n)
	b[0] |= 0x80
	return derTLV(0x02, append([]byte{0}, b...))
}

// rsaPKCS1 is an RSAPrivateKey of a 2048-bit key: version, n, e, d, p, q,
// dp, dq, qinv.
func rsaPKCS1(r *rand.Rand) []byte {
	var c []byte
	c = append(c, 0x02, 0x01, 0x00)
	c = append(c, derInt(r, 256)...)
	c = append(c, 0x02, 0x03, 0x01, 0x00, 0x01)
	c = append(c, derInt(r, 256)...)
	for range 5 {
		c = append(c, derInt(r, 128)...)
	}
	return derTLV(0x30, c)
}

// pkcs8RSA is a "BEGIN PRIVATE KEY" block holding an RSA key.
func pkcs8RSA(r *rand.Rand) string {
	algo := []byte{0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00}
	c := append([]byte{0x02, 0x01, 0x00}, algo...)
	c = append(c, derTLV(0x04, rsaPKCS1(r))...)
	return pemBlock("PRIVATE KEY", derTLV(0x30, c), 64)
}

// ecSEC1 is a P-256 ECPrivateKey: version 1, the scalar, the curve OID and
// the uncompressed public point.
func ecSEC1(r *rand.Rand) []byte {
	c := []byte{0x02, 0x01, 0x01}
	c = append(c, derTLV(0x04, randBytes(r, 32))...)
	c = append(c, 0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07)
	pub := append([]byte{0x00, 0x04}, randBytes(r, 64)...)
	c = append(c, derTLV(0xa1, derTLV(0x03, pub))...)
	return derTLV(0x30, c)
}

// ed25519PKCS8 is a PKCS #8 Ed25519 key (RFC 8410): always 48 bytes.
func ed25519PKCS8(r *rand.Rand) []byte {
	c := []byte{0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70}
	c = append(c, derTLV(0x04, derTLV(0x04, randBytes(r, 32)))...)
	return derTLV(0x30, c)
}

// opensshEd25519 is an unencrypted openssh-key-v1 Ed25519 key.
func opensshEd25519(r *rand.Rand) []byte {
	str := func(b []byte, s []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...)
	}
	pub := randBytes(r, 32)
	pubBlob := str(str(nil, []byte("ssh-ed25519")), pub)
	check := randBytes(r, 4)
	var priv []byte
	priv = append(priv, check...)
	priv = append(priv, check...)
	priv = str(priv, []byte("ssh-ed25519"))
	priv = str(priv, pub)
	priv = str(priv, append(randBytes(r, 32), pub...))
	priv = str(priv, []byte(pick(r, []string{"dev@laptop", "ci@build-01", "deploy@bastion"})))
	for i := byte(1); len(priv)%8 != 0; i++ {
		priv = append(priv, i)
	}
	b := []byte("openssh-key-v1\x00")
	b = str(b, []byte("none"))
	b = str(b, []byte("none"))
	b = str(b, nil)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = str(b, pubBlob)
	return str(b, priv)
}
