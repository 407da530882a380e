//go:build !linux

package chaos

import "syscall"

// smallReceiveBuffer is a no-op where setting it is not portable.
func smallReceiveBuffer(network, address string, c syscall.RawConn) error { return nil }
