package guardtest

import (
	"hash/crc32"
	"math/big"
	"strings"
)

// Luhn reports whether the digits of s (other characters ignored) pass the
// Luhn check that payment card numbers carry.
func Luhn(s string) bool {
	sum, n := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n > 0 && sum%10 == 0
}

// luhnDigit returns the check digit that makes payload+digit pass Luhn.
func luhnDigit(payload string) byte {
	for d := byte('0'); d <= '9'; d++ {
		if Luhn(payload + string(d)) {
			return d
		}
	}
	panic("BUG: no Luhn digit")
}

// IBANValid reports whether s (spaces ignored) is an IBAN whose check digits
// pass ISO 7064 mod 97-10.
func IBANValid(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	return ibanMod97(s[4:]+s[:4]) == 1
}

// ibanMod97 returns the IBAN numeric form of s (letters as 10..35) mod 97,
// or -1 when s holds a character an IBAN may not.
func ibanMod97(s string) int {
	var num strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			num.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			num.WriteString(big.NewInt(int64(c-'A') + 10).String())
		default:
			return -1
		}
	}
	n, _ := new(big.Int).SetString(num.String(), 10)
	return int(new(big.Int).Mod(n, big.NewInt(97)).Int64())
}

// ibanCheck returns the two check digits of an IBAN of country cc and bban.
func ibanCheck(cc, bban string) string {
	d := 98 - ibanMod97(bban+cc+"00")
	return string([]byte{byte('0' + d/10), byte('0' + d%10)})
}

// base62CRC returns the 6-character base62 CRC32 checksum that GitHub and
// npm tokens end with, of their random part.
func base62CRC(s string) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := crc32.ChecksumIEEE([]byte(s))
	out := []byte("000000")
	for i := 5; i >= 0 && v > 0; i-- {
		out[i] = digits[v%62]
		v /= 62
	}
	return string(out)
}

// TokenChecksumValid reports whether a GitHub classic token (ghp_ and the
// like) or an npm token ends with the CRC32 checksum of its random part.
func TokenChecksumValid(tok string) bool {
	_, body, ok := strings.Cut(tok, "_")
	if !ok || len(body) != 36 {
		return false
	}
	return base62CRC(body[:30]) == body[30:]
}
