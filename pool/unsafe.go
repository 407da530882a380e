package pool

import "unsafe"

// B2S returns a string view of b without copying.
//
// The string is valid only while b is neither modified nor returned to a pool.
// This package is the only place in slipstream that imports unsafe.
func B2S(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// S2B returns a byte view of s without copying.
//
// The returned slice must never be modified: it aliases immutable string memory.
func S2B(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
