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

// Foreign returns a byte view of n bytes at address p, in memory the Go
// runtime does not manage (the C heap of modernc.org/libc, which the
// SQLite ledger writes through).
//
// The slice is valid until that memory is freed; it must never be kept
// past it, and p must not point into Go memory.
func Foreign(p uintptr, n int) []byte {
	// p's bits read as a pointer: a uintptr-to-Pointer conversion would
	// be a misuse for Go memory, which p never is.
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	return unsafe.Slice((*byte)(ptr), n)
}
