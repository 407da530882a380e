//go:build amd64 && !purego

package guard

import "golang.org/x/sys/cpu"

// haveBlocks reports whether anchorBlock runs on this CPU.
var haveBlocks = cpu.X86.HasAVX2

// anchorMasks finds the 64-byte blocks at the start of b that hold an
// anchor of t and stores each one's offset and mask in out (bit k: the
// byte at offset+k is an anchor), until out is full. It returns how many
// it stored and how many bytes it classified: every whole block up to the
// last one stored when out filled, else every whole block of b. It needs
// AVX2 (haveBlocks).
//
//go:noescape
func anchorMasks(b []byte, t *nibbleTable, out *[maskBlocks]blockMask) (n, scanned int)
