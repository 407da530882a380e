//go:build !amd64 || purego

package guard

// haveBlocks is false: without vector code the scan sweeps or walks.
const haveBlocks = false

func anchorMasks(b []byte, t *nibbleTable, out *[maskBlocks]blockMask) (n, scanned int) {
	panic("guard: anchorMasks without vector support")
}
