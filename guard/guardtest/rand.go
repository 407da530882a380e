package guardtest

import (
	"math/rand/v2"
	"strings"
)

// Alphabets of generated values.
const (
	upperChars  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerChars  = "abcdefghijklmnopqrstuvwxyz"
	digitChars  = "0123456789"
	alnumChars  = upperChars + lowerChars + digitChars
	b64Chars    = alnumChars + "+/"
	b64urlChars = alnumChars + "-_"
	base32Chars = upperChars + "234567"
	hexChars    = "0123456789abcdef"
)

// newRand returns the generator of a seed; stream separates the uses of one
// seed (secrets, traffic, negative content) so they do not repeat each other.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

// randString returns n characters drawn from alphabet.
func randString(r *rand.Rand, alphabet string, n int) string {
	var b strings.Builder
	b.Grow(n)
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// randDigits returns n decimal digits, the first not 0 when nonZero.
func randDigits(r *rand.Rand, n int, nonZero bool) string {
	s := []byte(randString(r, digitChars, n))
	if nonZero && n > 0 {
		s[0] = byte('1' + r.IntN(9))
	}
	return string(s)
}

// randBytes returns n random bytes.
func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// pick returns one of xs.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }
