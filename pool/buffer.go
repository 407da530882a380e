// Package pool holds slipstream's bounded buffer pools and its only unsafe
// conversions.
//
// Buffers come in size classes (4 KiB, 16 KiB, ... 16 MiB); a buffer is
// returned to the class its capacity fits, and a buffer over MaxPooled is
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
	pageSize     = 4096
	minClassBits = 12 // 4 KiB
	classStep    = 2  // each class is 4x the previous one
	numClasses   = 7  // 4K, 16K, 64K, 256K, 1M, 4M, 16M
)

// MaxPooled is the largest capacity a buffer may have and still be kept by
// Put. Larger buffers are left to the garbage collector.
const MaxPooled = 1 << (minClassBits + classStep*(numClasses-1)) // 16 MiB

var classes [numClasses]sync.Pool

// Get returns an empty buffer whose capacity is at least sizeHint
// (sizeHint <= 0 means "small"). Return it with Put when done.
//
// A new buffer is sized to sizeHint rounded up to 4 KiB, not to its class,
// so that a cold pool costs about sizeHint bytes and no more.
func Get(sizeHint int) *Buffer {
	c := classOf(sizeHint)
	if c < numClasses {
		if v := classes[c].Get(); v != nil {
			return v.(*Buffer)
		}
		if b := getBelow(c, sizeHint); b != nil {
			return b
		}
	}
	n := (max(sizeHint, 1) + pageSize - 1) &^ (pageSize - 1)
	return &Buffer{B: make([]byte, 0, n)}
}

// getBelow looks one class down, where buffers that were allocated to an
// exact size land, and takes one only if it is large enough.
func getBelow(c, sizeHint int) *Buffer {
	if c == 0 {
		return nil
	}
	v := classes[c-1].Get()
	if v == nil {
		return nil
	}
	b := v.(*Buffer)
	if cap(b.B) >= sizeHint {
		return b
	}
	classes[c-1].Put(b)
	return nil
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
	b := bits.Len(uint(n-1)) - minClassBits
	return (b + classStep - 1) / classStep
}

// floorClass is the largest class whose capacity does not exceed n, so
// that every buffer in class c has capacity >= classCap(c).
func floorClass(n int) int {
	b := bits.Len(uint(n)) - 1 - minClassBits
	return min(b/classStep, numClasses-1)
}

func classCap(c int) int { return 1 << (minClassBits + classStep*c) }
