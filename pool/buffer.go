// Package pool holds slipstream's bounded buffer pools and its only unsafe
// conversions.
//
// Buffers come in size classes from 4 KiB to 16 MiB, eight per doubling; a
// buffer is returned to the largest class its capacity covers, and a buffer over MaxPooled is
// dropped on Put so that one 30 MB request does not pin 30 MB for the life
// of the process.
package pool

import (
	"math/bits"
	"sync"

	"github.com/valyala/bytebufferpool"
)

// Buffer is a growable byte buffer; B is its content.
type Buffer = bytebufferpool.ByteBuffer

const (
	minClassBits = 12 // the smallest class holds 4 KiB
	maxClassBits = 24 // the largest holds 16 MiB
	subClasses   = 8  // classes per doubling: at most 12.5% waste
	numClasses   = (maxClassBits-minClassBits)*subClasses + 1
)

// MaxPooled is the largest capacity a buffer may have and still be kept by
// Put. Larger buffers are left to the garbage collector.
const MaxPooled = 1 << maxClassBits // 16 MiB

var classes [numClasses]sync.Pool

// Get returns an empty buffer whose capacity is at least sizeHint
// (sizeHint <= 0 means "small"). Return it with Put when done.
//
// Every buffer in a class has at least the class's capacity, so a pooled
// buffer always fits; a new one is allocated at the class capacity, at
// most 12.5% above sizeHint, so that it comes back to the same class.
func Get(sizeHint int) *Buffer {
	c := classOf(sizeHint)
	if c >= numClasses {
		return &Buffer{B: make([]byte, 0, sizeHint)}
	}
	if v := classes[c].Get(); v != nil {
		return v.(*Buffer)
	}
	return &Buffer{B: make([]byte, 0, classCap(c))}
}

// Put resets b and returns it to its size class; b must not be used after.
// A nil b, or one whose capacity exceeds MaxPooled, is dropped.
func Put(b *Buffer) {
	if b == nil {
		return
	}
	n := cap(b.B)
	if n > MaxPooled || n < 1<<minClassBits {
		return
	}
	b.B = b.B[:0]
	classes[floorClass(n)].Put(b)
}

// classOf is the smallest class whose capacity holds n bytes.
func classOf(n int) int {
	if n <= 1<<minClassBits {
		return 0
	}
	e := bits.Len(uint(n-1)) - 1 // 2^e < n <= 2^(e+1)
	step := 1 << e / subClasses
	sub := (n - 1<<e + step - 1) / step // 1..8
	return (e-minClassBits)*subClasses + sub
}

// floorClass is the largest class whose capacity does not exceed n
// (n >= 4 KiB), so that every buffer in class c holds classCap(c).
func floorClass(n int) int {
	e := bits.Len(uint(n)) - 1
	sub := (n - 1<<e) / (1 << e / subClasses) // 0..7
	return min((e-minClassBits)*subClasses+sub, numClasses-1)
}

// classCap is the capacity of class c.
func classCap(c int) int {
	if c == 0 {
		return 1 << minClassBits
	}
	e := minClassBits + (c-1)/subClasses
	sub := (c-1)%subClasses + 1
	return 1<<e + sub*(1<<e/subClasses)
}
